// bench-net-devices: the devices of another node through troupe, against what an MPI programmer
// writes by hand for the same work. Run as two ranks; rank 0 drives, prints and writes the CSV,
// rank 1 owns the device and serves both sides (troupe's device server, and the hand-written
// MPI loop below on its main thread).
//   mpirun -n 2 build/release/bench/bench-net-devices --csv bench/results/net-devices.csv
//
//   remote_stencil       HPXCL's stencil on node 1's device: input there, kernel, output back.
//                        mpi-native: rank 0 MPI_Sends the input; rank 1 receives it into pinned
//                        memory, copies it to the GPU, runs the kernel, copies the result back
//                        and MPI_Sends it (the CUDA driver API; only where node 1 has a GPU).
//   remote_partition     HPXCL's partition on node 1's device: the data in 4 parts, each written,
//                        computed and read back on a queue of its own, all overlapping.
//                        mpi-native: rank 0 MPI_Sends the data; rank 1 runs the 4 parts on 4
//                        streams from pinned memory and MPI_Sends the result back.
//   remote_write         buffer::write of a vector to node 1's device, against MPI_Send of the
//                        same bytes into a kept buffer on rank 1 (acknowledged).
//   remote_read          buffer::read from node 1's device, against MPI_Recv of the same bytes.
//   remote_pipeline      2 and 20 kernel actors (scale) on node 1's device, driven from node 0,
//                        against the same pipeline built and driven by an actor on node 1
//                        itself; both move the input there and the output back once, so the
//                        difference of the two lengths over 18 is one stage's time.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "device/kernels.hpp"
#include "troupe/device.hpp"
#include "troupe/kernel.hpp"
#include "troupe/net.hpp"
#ifdef TROUPE_BENCH_HAS_CUDA
#include "device/native_cuda.hpp"
#endif

namespace {

using troupe::actor;
using troupe::behavior;
using troupe::event_based_actor;
namespace kernel = troupe::kernel;

// What rank 0 asks of rank 1's hand-written side (tag command_tag), and the tags of its data.
enum class op : std::int64_t { quit, stencil, partition, sink, source };
constexpr int command_tag = 7001;
constexpr int data_tag = 7002;
constexpr int answer_tag = 7003;
constexpr int pipeline_stages = 20;
// HPXCL's partition: parts per device, each on a queue (stream) of its own.
constexpr std::size_t partition_parts = 4;

void command(op what, std::int64_t size) {
  const std::int64_t message[2] = {static_cast<std::int64_t>(what), size};
  MPI_Send(message, 2, MPI_INT64_T, 1, command_tag, MPI_COMM_WORLD);
}

/// Sends or receives `bytes` in pieces MPI's int counts can hold.
void send_bytes(const void* data, std::size_t bytes, int to, int tag) {
  constexpr std::size_t piece = std::size_t{1} << 30;
  for (std::size_t done = 0; done < bytes || bytes == 0; done += piece) {
    MPI_Send(static_cast<const char*>(data) + done, static_cast<int>(std::min(piece, bytes - done)),
             MPI_BYTE, to, tag, MPI_COMM_WORLD);
    if (bytes == 0) break;
  }
}
void receive_bytes(void* data, std::size_t bytes, int from, int tag) {
  constexpr std::size_t piece = std::size_t{1} << 30;
  for (std::size_t done = 0; done < bytes || bytes == 0; done += piece) {
    MPI_Recv(static_cast<char*>(data) + done, static_cast<int>(std::min(piece, bytes - done)),
             MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (bytes == 0) break;
  }
}

std::string stencil_check(const std::vector<float>& input, const float* output) {
  const std::size_t n = input.size();
  for (std::size_t i = 0; i < n; ++i) {
    const float expected =
        i == 0 || i == n - 1 ? input[i] : 0.5f * input[i - 1] + input[i] + 0.5f * input[i + 1];
    if (std::abs(output[i] - expected) > 1e-5f * std::abs(expected))
      return "element " + std::to_string(i) + " is " + std::to_string(output[i]) + ", expected " +
             std::to_string(expected);
  }
  return "";
}

#ifdef TROUPE_BENCH_HAS_CUDA
/// Rank 1's hand-written side: the stencil through the CUDA driver API, on pinned memory with
/// asynchronous copies and one synchronization, buffers kept while the size stays.
class native_stencil {
 public:
  native_stencil()
      : device_(0),
        stream_(device_),
        module_(device_, troupe::bench::kernels::stencil.cuda,
                troupe::bench::kernels::stencil.cuda_options),
        kernel_(module_.function("stencil")) {}

  void serve(std::size_t n) {
    namespace cuda = troupe::bench::cuda;
    if (n != size_) {
      input_.reset();
      output_.reset();
      in_.reset();
      out_.reset();
      input_ = std::make_unique<cuda::device_memory>(device_, n * sizeof(float));
      output_ = std::make_unique<cuda::device_memory>(device_, n * sizeof(float));
      in_ = std::make_unique<cuda::pinned_memory<float>>(device_, n);
      out_ = std::make_unique<cuda::pinned_memory<float>>(device_, n);
      size_ = n;
    }
    receive_bytes(in_->data(), n * sizeof(float), 0, data_tag);
    device_.make_current();
    const auto& f = cuda::functions();
    cuda::check(f.cuMemcpyHtoDAsync(input_->get(), in_->data(), n * sizeof(float), stream_.get()),
                "cuMemcpyHtoDAsync");
    const unsigned count = static_cast<unsigned>(n);
    cuda::launch(kernel_, stream_.get(), {cuda::blocks_for(n, 256)}, {256}, input_->get(),
                 output_->get(), count);
    cuda::check(f.cuMemcpyDtoHAsync(out_->data(), output_->get(), n * sizeof(float), stream_.get()),
                "cuMemcpyDtoHAsync");
    cuda::check(f.cuStreamSynchronize(stream_.get()), "cuStreamSynchronize");
    send_bytes(out_->data(), n * sizeof(float), 0, answer_tag);
  }

 private:
  troupe::bench::cuda::device device_;
  troupe::bench::cuda::stream stream_;
  troupe::bench::cuda::module module_;
  CUfunction kernel_;
  std::size_t size_ = 0;
  std::unique_ptr<troupe::bench::cuda::device_memory> input_, output_;
  std::unique_ptr<troupe::bench::cuda::pinned_memory<float>> in_, out_;
};
#endif

#ifdef TROUPE_BENCH_HAS_CUDA
/// Rank 1's hand-written partition: 4 streams, each copying its part in, running the kernel and
/// copying it back, from and to pinned memory; one synchronization per stream.
class native_partition {
 public:
  native_partition()
      : device_(0),
        module_(device_, troupe::bench::kernels::partition.cuda,
                troupe::bench::kernels::partition.cuda_options),
        kernel_(module_.function(troupe::bench::kernels::partition.name)) {
    for (std::size_t p = 0; p < partition_parts; ++p)
      streams_.push_back(std::make_unique<troupe::bench::cuda::stream>(device_));
  }

  void serve(std::size_t n) {
    namespace cuda = troupe::bench::cuda;
    if (n != size_) {
      memory_.reset();
      host_.reset();
      memory_ = std::make_unique<cuda::device_memory>(device_, n * sizeof(float));
      host_ = std::make_unique<cuda::pinned_memory<float>>(device_, n);
      size_ = n;
    }
    receive_bytes(host_->data(), n * sizeof(float), 0, data_tag);
    device_.make_current();
    const auto& f = cuda::functions();
    const std::size_t each = (n + partition_parts - 1) / partition_parts;
    for (std::size_t p = 0; p < partition_parts; ++p) {
      const std::size_t first = std::min(n, p * each);
      const std::size_t count = std::min(n, first + each) - first;
      if (count == 0) continue;
      CUstream on = streams_[p]->get();
      CUdeviceptr part = memory_->get() + first * sizeof(float);
      cuda::check(f.cuMemcpyHtoDAsync(part, host_->data() + first, count * sizeof(float), on),
                  "cuMemcpyHtoDAsync");
      cuda::launch(kernel_, on, {cuda::blocks_for(count, 256)}, {256}, part,
                   static_cast<unsigned>(count));
      cuda::check(f.cuMemcpyDtoHAsync(host_->data() + first, part, count * sizeof(float), on),
                  "cuMemcpyDtoHAsync");
    }
    for (auto& stream : streams_)
      cuda::check(f.cuStreamSynchronize(stream->get()), "cuStreamSynchronize");
    send_bytes(host_->data(), n * sizeof(float), 0, answer_tag);
  }

 private:
  troupe::bench::cuda::device device_;
  troupe::bench::cuda::module module_;
  CUfunction kernel_;
  std::vector<std::unique_ptr<troupe::bench::cuda::stream>> streams_;
  std::size_t size_ = 0;
  std::unique_ptr<troupe::bench::cuda::device_memory> memory_;
  std::unique_ptr<troupe::bench::cuda::pinned_memory<float>> host_;
};
#endif

/// Rank 1's main thread: serves rank 0's hand-written side until told to quit. Returns whether
/// it has the native stencil (sent to rank 0 first).
void serve_baseline() {
  std::int64_t native = 0;
#ifdef TROUPE_BENCH_HAS_CUDA
  std::unique_ptr<native_stencil> stencil;
  std::unique_ptr<native_partition> partition;
  std::string why;
  if (troupe::bench::cuda::load(why) != nullptr) {
    try {
      stencil = std::make_unique<native_stencil>();
      partition = std::make_unique<native_partition>();
      native = 1;
    } catch (const std::exception& failure) {
      std::cerr << "bench-net-devices: rank 1 has no native stencil: " << failure.what() << "\n";
    }
  }
#endif
  MPI_Send(&native, 1, MPI_INT64_T, 0, answer_tag, MPI_COMM_WORLD);
  std::vector<std::byte> kept;
  for (;;) {
    std::int64_t message[2];
    MPI_Recv(message, 2, MPI_INT64_T, 0, command_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const auto size = static_cast<std::size_t>(message[1]);
    switch (static_cast<op>(message[0])) {
      case op::quit:
        return;
      case op::stencil:
#ifdef TROUPE_BENCH_HAS_CUDA
        stencil->serve(size);
#endif
        break;
      case op::partition:
#ifdef TROUPE_BENCH_HAS_CUDA
        partition->serve(size);
#endif
        break;
      case op::sink: {
        if (kept.size() < size) kept.resize(size);
        receive_bytes(kept.data(), size, 0, data_tag);
        const char ack = 1;
        MPI_Send(&ack, 1, MPI_CHAR, 0, answer_tag, MPI_COMM_WORLD);
        break;
      }
      case op::source:
        if (kept.size() < size) kept.resize(size);
        send_bytes(kept.data(), size, 0, answer_tag);
        break;
    }
  }
}

const kernel::source& scale_source() {
  static const kernel::source source{
      R"(__kernel void scale(__global const float* x, __global float* y, float by) {
  size_t i = get_global_id(0);
  y[i] = x[i] * by;
})",
      R"(extern "C" __global__ void scale(const float* x, float* y, float by) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] * by;
})",
      ""};
  return source;
}

/// `stages` (2 or more) scale stages on `device`: ×1 in the middle, ×2 first and ×0.5 last, so
/// that the output equals the input.
actor make_pipeline(troupe::actor_system& sys, const troupe::device& device, std::size_t n,
                    int stages) {
  using kernel::in;
  using kernel::out;
  using kernel::priv;
  using kernel::ref;
  using kernel::val;
  const auto range = troupe::nd_range{{n}};
  actor pipeline = sys.spawn_kernel(scale_source(), "scale", range, kernel::on(device),
                                    in<float, ref>{}, out<float, val>{}, priv<float>{0.5f});
  for (int stage = 0; stage < stages - 2; ++stage)
    pipeline = pipeline * sys.spawn_kernel(scale_source(), "scale", range, kernel::on(device),
                                           in<float, ref>{}, out<float, ref>{}, priv<float>{1.0f});
  return pipeline * sys.spawn_kernel(scale_source(), "scale", range, kernel::on(device),
                                     in<float, val>{}, out<float, ref>{}, priv<float>{2.0f});
}

/// The device of `node` the benchmarks use: its first GPU, else its first device.
troupe::device device_of(troupe::actor_system& sys, troupe::node_id node) {
  auto mine = sys.devices().on_node(node);
  auto gpus = mine.type(troupe::device_type::gpu);
  return gpus.empty() ? mine.front() : gpus.front();
}

troupe::config bench_config(int threads) {
  troupe::config cfg;
  cfg.threads = static_cast<std::size_t>(threads);
  // Builds the pipeline on its node's own device once, then runs it per request.
  cfg.add_actor_type(
      "local_pipeline", [](event_based_actor* self, std::uint64_t n, int stages) -> behavior {
        auto pipeline =
            make_pipeline(self->system(),
                          device_of(self->system(), self->system().nodes().this_node()), n, stages);
        return {[self, pipeline](std::vector<float>& x) {
          return self->delegate(pipeline, std::move(x));
        }};
      });
  return cfg;
}

void run_benchmarks(troupe::bench::harness& bench, troupe::actor_system& sys, bool native) {
  const bool quick = bench.quick();
  const troupe::device remote = device_of(sys, 1);
  const std::string where = "device=" + remote.name() + " (node 1)";
  std::cout << "node 1's device: " << remote.name() << "\n\n";

  if (bench.selected("remote_stencil")) {
    auto program = remote
                       .compile(troupe::bench::kernels::stencil.text(remote.backend()),
                                troupe::bench::kernels::stencil.options(remote.backend()))
                       .get();
    const std::size_t largest = quick ? 100'000 : 100'000'000;
    for (std::size_t n = 1000; n <= largest; n *= 10) {
      std::vector<float> input(n);
      for (std::size_t i = 0; i < n; ++i) input[i] = 1.0f + static_cast<float>(i % 1024) / 1024.0f;
      auto in = remote.allocate<float>(n);
      auto out = remote.allocate<float>(n);
      std::vector<float> result(n);
      std::vector<troupe::bench::variant<std::string>> variants;
      variants.push_back({"troupe", [&] {
                            std::fill(result.begin(), result.end(), 0.0f);
                            auto written = in.write(std::span<const float>{input});
                            auto ran = remote.launch(program, "stencil", troupe::nd_range{{n}},
                                                     troupe::after(written), in, out,
                                                     static_cast<unsigned>(n));
                            out.read_into(std::span<float>{result}, troupe::after(ran)).get();
                            return stencil_check(input, result.data());
                          }});
      if (native)
        variants.push_back({"mpi-native", [&] {
                              std::fill(result.begin(), result.end(), 0.0f);
                              command(op::stencil, static_cast<std::int64_t>(n));
                              send_bytes(input.data(), n * sizeof(float), 1, data_tag);
                              receive_bytes(result.data(), n * sizeof(float), 1, answer_tag);
                              return stencil_check(input, result.data());
                            }});
      bench.compare<std::string>("remote_stencil", where + ";n=" + std::to_string(n), variants, "");
    }
  }

  if (bench.selected("remote_partition")) {
    auto program = remote
                       .compile(troupe::bench::kernels::partition.text(remote.backend()),
                                troupe::bench::kernels::partition.options(remote.backend()))
                       .get();
    std::vector<troupe::device_queue> queues;
    for (std::size_t p = 0; p < partition_parts; ++p) queues.push_back(remote.make_queue());
    const std::size_t largest = quick ? 100'000 : 100'000'000;
    for (std::size_t n = 100'000; n <= largest; n *= 10) {
      std::vector<float> input(n);
      for (std::size_t i = 0; i < n; ++i) input[i] = static_cast<float>(i % 4096) * 0.01f;
      std::vector<float> result(n);
      const std::size_t each = (n + partition_parts - 1) / partition_parts;
      std::vector<troupe::buffer<float>> parts;
      for (std::size_t p = 0; p < partition_parts; ++p)
        parts.push_back(remote.allocate<float>(each));
      auto check = [&] {
        for (std::size_t i = 0; i < n; ++i)
          if (std::abs(result[i] - 1.0f) > 1e-5f)
            return "element " + std::to_string(i) + " is " + std::to_string(result[i]) +
                   ", expected 1";
        return std::string{};
      };
      std::vector<troupe::bench::variant<std::string>> variants;
      variants.push_back(
          {"troupe", [&] {
             std::fill(result.begin(), result.end(), 0.0f);
             std::vector<troupe::future<void>> reads;
             for (std::size_t p = 0; p < partition_parts; ++p) {
               const std::size_t first = std::min(n, p * each);
               const std::size_t count = std::min(n, first + each) - first;
               auto& q = queues[p];
               auto w = q.write(parts[p], 0, std::span<const float>{input.data() + first, count});
               auto k = q.launch(program, troupe::bench::kernels::partition.name,
                                 troupe::nd_range{{count}}, troupe::after(w), parts[p],
                                 static_cast<unsigned>(count));
               reads.push_back(q.read_into(parts[p], std::span<float>{result.data() + first, count},
                                           troupe::after(k)));
             }
             for (auto& r : reads) r.get();
             return check();
           }});
      if (native)
        variants.push_back({"mpi-native", [&] {
                              std::fill(result.begin(), result.end(), 0.0f);
                              command(op::partition, static_cast<std::int64_t>(n));
                              send_bytes(input.data(), n * sizeof(float), 1, data_tag);
                              receive_bytes(result.data(), n * sizeof(float), 1, answer_tag);
                              return check();
                            }});
      bench.compare<std::string>(
          "remote_partition", where + ";n=" + std::to_string(n), variants, "",
          troupe::bench::rate{"GB/s", static_cast<double>(2 * n * sizeof(float))});
    }
  }

  std::vector<std::size_t> sizes{std::size_t{1} << 20, std::size_t{16} << 20,
                                 std::size_t{256} << 20};
  if (quick) sizes = {std::size_t{1} << 20};
  for (std::size_t bytes : sizes) {
    const std::size_t n = bytes / sizeof(float);
    std::vector<float> data(n, 1.5f);
    auto memory = remote.allocate<float>(n);
    memory.write(std::span<const float>{data}).get();
    const std::string parameters = where + ";bytes=" + std::to_string(bytes);
    const troupe::bench::rate moved{"GB/s", static_cast<double>(bytes)};
    if (bench.selected("remote_write"))
      bench.compare<std::string>("remote_write", parameters,
                                 {{"troupe",
                                   [&] {
                                     memory.write(std::span<const float>{data}).get();
                                     return std::string{};
                                   }},
                                  {"mpi",
                                   [&] {
                                     command(op::sink, static_cast<std::int64_t>(bytes));
                                     send_bytes(data.data(), bytes, 1, data_tag);
                                     char ack = 0;
                                     MPI_Recv(&ack, 1, MPI_CHAR, 1, answer_tag, MPI_COMM_WORLD,
                                              MPI_STATUS_IGNORE);
                                     return std::string{};
                                   }}},
                                 "", moved);
    if (bench.selected("remote_read")) {
      std::vector<float> into(n);
      bench.compare<std::string>("remote_read", parameters,
                                 {{"troupe",
                                   [&] {
                                     auto back = memory.read().get();
                                     return back.size() == n && back[n - 1] == 1.5f
                                                ? std::string{}
                                                : std::string{"wrong data"};
                                   }},
                                  {"mpi",
                                   [&] {
                                     command(op::source, static_cast<std::int64_t>(bytes));
                                     receive_bytes(into.data(), bytes, 1, answer_tag);
                                     return std::string{};
                                   }}},
                                 "", moved);
    }
  }

  // Run with 2 and with 20 stages: the difference over 18 is the time of one stage, without the
  // input's and output's way there and back, which both sides share.
  if (bench.selected("remote_pipeline")) {
    const std::size_t n = quick ? 4096 : std::size_t{1} << 20;
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97);
    auto check = [&](const std::vector<float>& y) {
      return y == x ? std::string{} : std::string{"the output differs from the input"};
    };
    for (int stages : {2, pipeline_stages}) {
      auto pipeline = make_pipeline(sys, remote, n, stages);
      auto local = sys.spawn_on(1, "local_pipeline", std::uint64_t{n}, stages).get();
      bench.compare<std::string>(
          "remote_pipeline",
          where + ";stages=" + std::to_string(stages) + ";n=" + std::to_string(n),
          {{"troupe-remote",
            [&] { return check(troupe::request<std::vector<float>>(pipeline, x).get()); }},
           {"troupe-on-node-1",
            [&] { return check(troupe::request<std::vector<float>>(local, x).get()); }}},
          "");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != 2) {
    if (rank == 0) std::cerr << "bench-net-devices: run it as 2 ranks (mpirun -n 2)\n";
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  {
    troupe::bench::options settings;
    try {
      settings = troupe::bench::parse_options("net-devices", argc, argv);
    } catch (const std::exception& failure) {
      if (rank == 0) std::cerr << "bench-net-devices: " << failure.what() << "\n";
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    troupe::actor_system sys{bench_config(settings.threads)};
    if (rank == 1) {
      serve_baseline();
    } else {
      std::int64_t native = 0;
      MPI_Recv(&native, 1, MPI_INT64_T, 1, answer_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      status = troupe::bench::run_main("net-devices", argc, argv, [&](troupe::bench::harness& b) {
        if (native == 0)
          std::cout << "mpi-native is left out: node 1 has no CUDA GPU for the hand-written "
                       "stencil\n";
        run_benchmarks(b, sys, native != 0);
      });
      command(op::quit, 0);
    }
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
