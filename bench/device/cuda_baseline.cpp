// The benchmarks written against the CUDA driver API alone: what troupe's CUDA rows are measured
// against. Every run first makes its device's context current, as troupe may have left another.
#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>

#include "device/kernels.hpp"
#include "device/native_baseline.hpp"
#include "device/native_cuda.hpp"

namespace troupe::bench {
namespace {

using cuda::check;
using cuda::functions;

// The block troupe picks for a 1-D nd_range (256) and for a 2-D one (16×16), so both sides run
// the same grid.
constexpr unsigned block_1d = 256;
constexpr unsigned block_2d = 16;

class cuda_baseline final : public native_baseline {
 public:
  explicit cuda_baseline(int ordinal) : device_(std::make_shared<cuda::device>(ordinal)) {}

  const std::string& device_name() const override { return device_->name(); }

  std::vector<device_variant> stencil(const stencil_problem& problem) override {
    const std::size_t count = problem.input.size();
    const std::size_t bytes = count * sizeof(float);
    const cuda::dimensions grid{cuda::blocks_for(count, block_1d)};
    const auto n = static_cast<unsigned>(count);

    // Pageable memory and the synchronous calls: the simplest CUDA program.
    device_variant sync = guarded("native-cuda-sync", [&] {
      struct state {
        state(std::shared_ptr<cuda::device> on, std::span<const float> values)
            : device(std::move(on)),
              program(*device, kernels::stencil.cuda, kernels::stencil.cuda_options),
              kernel(program.function(kernels::stencil.name)),
              input(*device, values.size_bytes()),
              output(*device, values.size_bytes()),
              source(values.begin(), values.end()),
              result(values.size()) {}
        std::shared_ptr<cuda::device> device;
        cuda::module program;
        CUfunction kernel;
        cuda::device_memory input;
        cuda::device_memory output;
        std::vector<float> source;  // its own copy, allocated as troupe's side allocates it
        std::vector<float> result;
      };
      auto run = std::make_shared<state>(device_, problem.input);
      device_variant variant;
      variant.prepare = [run] { clear(run->result); };
      variant.run = [run, bytes, grid, n] {
        run->device->make_current();
        check(functions().cuMemcpyHtoD(run->input.get(), run->source.data(), bytes),
              "cuMemcpyHtoD");
        cuda::launch(run->kernel, nullptr, grid, {block_1d}, run->input.get(), run->output.get(),
                     n);
        check(functions().cuCtxSynchronize(), "cuCtxSynchronize");
        check(functions().cuMemcpyDtoH(run->result.data(), run->output.get(), bytes),
              "cuMemcpyDtoH");
      };
      variant.check = [run, compare = problem.check] { return compare(run->result); };
      return variant;
    });

    // Pinned memory and asynchronous copies on one stream, one wait: CUDA as it is meant to be
    // used, and what troupe-pinned does.
    device_variant async = guarded("native-cuda-async", [&] {
      struct state {
        state(std::shared_ptr<cuda::device> on, std::span<const float> values)
            : device(std::move(on)),
              program(*device, kernels::stencil.cuda, kernels::stencil.cuda_options),
              kernel(program.function(kernels::stencil.name)),
              input(*device, values.size_bytes()),
              output(*device, values.size_bytes()),
              stream(*device),
              source(*device, values.size()),
              result(*device, values.size()) {
          std::copy(values.begin(), values.end(), source.begin());
        }
        std::shared_ptr<cuda::device> device;
        cuda::module program;
        CUfunction kernel;
        cuda::device_memory input;
        cuda::device_memory output;
        cuda::stream stream;
        cuda::pinned_memory<float> source;
        cuda::pinned_memory<float> result;
      };
      auto run = std::make_shared<state>(device_, problem.input);
      device_variant variant;
      variant.prepare = [run] { clear(run->result); };
      variant.run = [run, bytes, grid, n] {
        run->device->make_current();
        CUstream stream = run->stream.get();
        check(functions().cuMemcpyHtoDAsync(run->input.get(), run->source.data(), bytes, stream),
              "cuMemcpyHtoDAsync");
        cuda::launch(run->kernel, stream, grid, {block_1d}, run->input.get(), run->output.get(), n);
        check(functions().cuMemcpyDtoHAsync(run->result.data(), run->output.get(), bytes, stream),
              "cuMemcpyDtoHAsync");
        check(functions().cuStreamSynchronize(stream), "cuStreamSynchronize");
      };
      variant.check = [run, compare = problem.check] {
        return compare({run->result.data(), run->result.size()});
      };
      return variant;
    });
    return {std::move(sync), std::move(async)};
  }

  device_variant compile(const compile_problem& problem) override {
    return guarded("native-compile", [&] {
      struct state {
        std::shared_ptr<cuda::device> device;
        std::function<std::string()> fresh_source;
        std::unique_ptr<cuda::module> program;
        CUfunction kernel = nullptr;
      };
      auto run = std::make_shared<state>(state{device_, problem.fresh_source, nullptr, nullptr});
      device_variant variant;
      variant.prepare = [run] {
        run->kernel = nullptr;
        run->program.reset();
      };
      variant.run = [run] {
        run->program = std::make_unique<cuda::module>(*run->device, run->fresh_source(),
                                                      kernels::stencil.cuda_options);
        run->kernel = run->program->function(kernels::stencil.name);
      };
      variant.check = [run] { return run->kernel ? "" : "no kernel was built"; };
      return variant;
    });
  }

  device_variant partition(const std::vector<native_baseline*>& group,
                           const partition_problem& problem) override {
    return guarded(problem.compute ? "native-cuda" : "native-copy-only", [&] {
      // Declared in this order so that the streams and memory go before the module, and the
      // device (its primary context) last.
      struct member {
        std::shared_ptr<cuda::device> device;
        slice range;
        std::unique_ptr<cuda::module> program;
        CUfunction kernel = nullptr;
        std::unique_ptr<cuda::pinned_memory<float>> input;
        std::unique_ptr<cuda::pinned_memory<float>> output;
        std::unique_ptr<cuda::device_memory> memory;
        std::vector<slice> parts;  // within the member's slice
        std::vector<std::unique_ptr<cuda::stream>> streams;
      };
      auto members = std::make_shared<std::vector<member>>();
      std::vector<slice> slices = split(problem.count, group.size());
      for (std::size_t index = 0; index < group.size(); ++index) {
        member& joined = members->emplace_back();
        joined.device = dynamic_cast<cuda_baseline&>(*group[index]).device_;
        joined.range = slices[index];
        if (problem.compute) {
          joined.program = std::make_unique<cuda::module>(*joined.device, kernels::partition.cuda,
                                                          kernels::partition.cuda_options);
          joined.kernel = joined.program->function(kernels::partition.name);
        }
        const cuda::device& on = *joined.device;
        joined.input = std::make_unique<cuda::pinned_memory<float>>(on, joined.range.count);
        joined.output = std::make_unique<cuda::pinned_memory<float>>(on, joined.range.count);
        joined.memory =
            std::make_unique<cuda::device_memory>(on, joined.range.count * sizeof(float));
        fill_indices({joined.input->data(), joined.range.count}, joined.range.first);
        joined.parts = split(joined.range.count, problem.partitions);
        for (std::size_t part = 0; part < joined.parts.size(); ++part)
          joined.streams.push_back(std::make_unique<cuda::stream>(on));
      }
      device_variant variant;
      variant.prepare = [members] {
        for (member& each : *members) std::fill(each.output->begin(), each.output->end(), 0.0f);
      };
      // Every part is issued before any is waited for, so all of them overlap.
      variant.run = [members] {
        for (member& each : *members) {
          each.device->make_current();
          for (std::size_t part = 0; part < each.parts.size(); ++part) {
            const slice piece = each.parts[part];
            const CUstream stream = each.streams[part]->get();
            const CUdeviceptr memory = each.memory->get() + piece.first * sizeof(float);
            const std::size_t bytes = piece.count * sizeof(float);
            check(functions().cuMemcpyHtoDAsync(memory, each.input->data() + piece.first, bytes,
                                                stream),
                  "cuMemcpyHtoDAsync");
            if (each.kernel)
              cuda::launch(each.kernel, stream, {cuda::blocks_for(piece.count, block_1d)},
                           {block_1d}, memory, static_cast<unsigned>(piece.count));
            check(functions().cuMemcpyDtoHAsync(each.output->data() + piece.first, memory, bytes,
                                                stream),
                  "cuMemcpyDtoHAsync");
          }
        }
        for (member& each : *members) {
          each.device->make_current();
          for (auto& stream : each.streams)
            check(functions().cuStreamSynchronize(stream->get()), "cuStreamSynchronize");
        }
      };
      variant.check = [members, compare = problem.check] {
        return partition_problem::check_slices(compare, *members);
      };
      return variant;
    });
  }

  device_variant launch_latency(int launches) override {
    return guarded("native-cuda", [&] {
      struct state {
        explicit state(std::shared_ptr<cuda::device> on)
            : device(std::move(on)),
              program(*device, kernels::tick.cuda, kernels::tick.cuda_options),
              stream(*device),
              counter(*device, sizeof(int)) {}
        std::shared_ptr<cuda::device> device;
        cuda::module program;
        cuda::stream stream;
        cuda::device_memory counter;
      };
      auto run = std::make_shared<state>(device_);
      const CUfunction kernel = run->program.function(kernels::tick.name);
      device_variant variant;
      variant.prepare = [run] {
        run->device->make_current();
        check(functions().cuMemsetD32(run->counter.get(), 0, 1), "cuMemsetD32");
      };
      variant.run = [run, kernel, launches] {
        run->device->make_current();
        for (int launch = 0; launch < launches; ++launch) {
          cuda::launch(kernel, run->stream.get(), {1}, {1}, run->counter.get());
          check(functions().cuStreamSynchronize(run->stream.get()), "cuStreamSynchronize");
        }
      };
      variant.check = [run, launches] {
        int counted = 0;
        check(functions().cuMemcpyDtoH(&counted, run->counter.get(), sizeof counted),
              "cuMemcpyDtoH");
        return counted == launches ? std::string{}
                                   : "the counter reads " + std::to_string(counted) +
                                         ", expected " + std::to_string(launches);
      };
      return variant;
    });
  }

  device_variant copy_latency(int round_trips) override {
    return guarded("native-cuda", [&] {
      struct state {
        explicit state(std::shared_ptr<cuda::device> on)
            : device(std::move(on)), stream(*device), value(*device, sizeof(int)) {}
        std::shared_ptr<cuda::device> device;
        cuda::stream stream;
        cuda::device_memory value;
        int wrong = 0;
      };
      auto run = std::make_shared<state>(device_);
      device_variant variant;
      variant.prepare = [run] { run->wrong = 0; };
      variant.run = [run, round_trips] {
        run->device->make_current();
        const CUstream stream = run->stream.get();
        for (int sent = 0; sent < round_trips; ++sent) {
          int received = -1;
          check(functions().cuMemcpyHtoDAsync(run->value.get(), &sent, sizeof sent, stream),
                "cuMemcpyHtoDAsync");
          check(functions().cuMemcpyDtoHAsync(&received, run->value.get(), sizeof received, stream),
                "cuMemcpyDtoHAsync");
          check(functions().cuStreamSynchronize(stream), "cuStreamSynchronize");
          if (received != sent) ++run->wrong;
        }
      };
      variant.check = [run] { return wrong_round_trips(run->wrong); };
      return variant;
    });
  }

  device_variant mandelbrot(const mandelbrot_problem& problem) override {
    return guarded("native-cuda", [&] {
      const std::size_t bytes = std::size_t{3} * problem.width * problem.height;
      struct state {
        state(std::shared_ptr<cuda::device> on, const mandelbrot_problem& shown, std::size_t size)
            : device(std::move(on)),
              program(*device, kernels::mandelbrot.cuda, kernels::mandelbrot.cuda_options),
              image(*device, size),
              problem(shown),
              frames(shown.frames.size(), std::vector<std::uint8_t>(size)) {}
        std::shared_ptr<cuda::device> device;
        cuda::module program;
        cuda::device_memory image;
        mandelbrot_problem problem;
        std::vector<std::vector<std::uint8_t>> frames;
      };
      auto run = std::make_shared<state>(device_, problem, bytes);
      const CUfunction kernel = run->program.function(kernels::mandelbrot.name);
      device_variant variant;
      variant.prepare = [run] {
        for (auto& frame : run->frames) std::fill(frame.begin(), frame.end(), std::uint8_t{0});
      };
      variant.run = [run, kernel, bytes] {
        run->device->make_current();
        const mandelbrot_problem& frames = run->problem;
        const cuda::dimensions grid{cuda::blocks_for(frames.width, block_2d),
                                    cuda::blocks_for(frames.height, block_2d)};
        for (std::size_t index = 0; index < frames.frames.size(); ++index) {
          const view& shown = frames.frames[index];
          cuda::launch(kernel, nullptr, grid, {block_2d, block_2d}, run->image.get(), frames.width,
                       frames.height, shown.x0, shown.y0, shown.step);
          // On the legacy default stream the copy waits for the kernel.
          check(functions().cuMemcpyDtoH(run->frames[index].data(), run->image.get(), bytes),
                "cuMemcpyDtoH");
          frames.save(run->frames[index], index, "native-cuda");
        }
      };
      variant.check = [run] { return run->problem.check_all(run->frames); };
      return variant;
    });
  }

 private:
  template <class Values>
  static void clear(Values& values) {
    std::fill(values.begin(), values.end(), std::numeric_limits<float>::quiet_NaN());
  }

  std::shared_ptr<cuda::device> device_;
};

}  // namespace

std::unique_ptr<native_baseline> open_cuda_baseline(int ordinal, const std::string& expected_name,
                                                    std::string& why) {
  if (!cuda::load(why)) return nullptr;
  try {
    int count = 0;
    check(functions().cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count) {
      why = "the driver lists " + std::to_string(count) + " CUDA devices, troupe more";
      return nullptr;
    }
    auto baseline = std::make_unique<cuda_baseline>(ordinal);
    if (baseline->device_name() != expected_name) {
      why = "CUDA device " + std::to_string(ordinal) + " is '" + baseline->device_name() +
            "', troupe's '" + expected_name + "'";
      return nullptr;
    }
    return baseline;
  } catch (const std::exception& error) {
    why = error.what();
    return nullptr;
  }
}

}  // namespace troupe::bench
