// The native side of bench-kernel on OpenCL: what a program written against OpenCL alone does.
#include <atomic>
#include <cstring>
#include <future>

#include "device/native_opencl.hpp"
#include "kernel/kernel_bench.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::bench::kernel_bench {
namespace {

namespace trace = troupe::detail::stage_trace;

class opencl_side final : public native_side {
 public:
  explicit opencl_side(cl_device_id id) : device_(id) {}

  device_variant matmul_request(std::shared_ptr<const std::vector<float>> a,
                                std::shared_ptr<const std::vector<float>> b,
                                std::size_t n) override {
    return guarded("native-naive", [&] {
      struct state {
        opencl::queue queue;
        opencl::kernel kernel;
        std::vector<float> c;
      };
      auto run = std::make_shared<state>(state{device_.make_queue(),
                                               device_.build(matmul_source.opencl, "m_mult"),
                                               std::vector<float>(n * n)});
      device_variant variant;
      variant.prepare = [run] { std::fill(run->c.begin(), run->c.end(), -1.0f); };
      variant.run = [this, run, a, b, n] {
        const std::size_t bytes = n * n * sizeof(float);
        auto da = device_.allocate(bytes), db = device_.allocate(bytes),
             dc = device_.allocate(bytes);
        cl_command_queue q = run->queue.get();
        // In a trace build, each driver call between the points troupe's launches record.
        const auto traced = [](cl_int status, const char* call) {
          trace::record(trace::point::driver_flush);
          opencl::check(status, call);
        };
        trace::record(trace::point::driver_call);
        traced(
            clEnqueueWriteBuffer(q, da.get(), CL_FALSE, 0, bytes, a->data(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
        trace::record(trace::point::driver_call);
        traced(
            clEnqueueWriteBuffer(q, db.get(), CL_FALSE, 0, bytes, b->data(), 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
        const cl_uint size = static_cast<cl_uint>(n);
        opencl::set_arguments(run->kernel.get(), da.get(), db.get(), dc.get(), size);
        const std::size_t global[2] = {n, n};
        trace::record(trace::point::driver_call);
        traced(clEnqueueNDRangeKernel(q, run->kernel.get(), 2, nullptr, global, nullptr, 0, nullptr,
                                      nullptr),
               "clEnqueueNDRangeKernel");
        trace::record(trace::point::driver_call);
        traced(
            clEnqueueReadBuffer(q, dc.get(), CL_TRUE, 0, bytes, run->c.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
      };
      variant.check = [run, a, b, n] { return check_product(*a, *b, run->c.data(), n); };
      return variant;
    });
  }

  device_variant matmul_request_tuned(std::shared_ptr<const std::vector<float>> a,
                                      std::shared_ptr<const std::vector<float>> b,
                                      std::size_t n) override {
    return guarded("native-tuned", [&] {
      const std::size_t count = n * n, bytes = count * sizeof(float);
      auto run = std::make_shared<kept_multiply>(device_, count);
      // The matrices live in pinned memory, where a program that moves them often keeps them,
      // and the product lands there: no copy but the DMA, and one synchronization.
      auto host = std::make_shared<pinned_inputs>(device_, count);
      std::memcpy(host->a.data(), a->data(), bytes);
      std::memcpy(host->b.data(), b->data(), bytes);
      opencl::set_arguments(run->kernel.get(), run->a.get(), run->b.get(), run->c.get(),
                            static_cast<cl_uint>(n));
      device_variant variant;
      variant.prepare = [run] { std::fill(run->staged_c.begin(), run->staged_c.end(), -1.0f); };
      variant.run = [run, host, n, bytes] {
        cl_command_queue q = run->queue.get();
        opencl::check(clEnqueueWriteBuffer(q, run->a.get(), CL_FALSE, 0, bytes, host->a.data(), 0,
                                           nullptr, nullptr),
                      "clEnqueueWriteBuffer");
        opencl::check(clEnqueueWriteBuffer(q, run->b.get(), CL_FALSE, 0, bytes, host->b.data(), 0,
                                           nullptr, nullptr),
                      "clEnqueueWriteBuffer");
        const std::size_t global[2] = {n, n};
        opencl::check(clEnqueueNDRangeKernel(q, run->kernel.get(), 2, nullptr, global, nullptr, 0,
                                             nullptr, nullptr),
                      "clEnqueueNDRangeKernel");
        opencl::check(clEnqueueReadBuffer(q, run->c.get(), CL_FALSE, 0, bytes, run->staged_c.data(),
                                          0, nullptr, nullptr),
                      "clEnqueueReadBuffer");
        opencl::check(clFinish(q), "clFinish");
      };
      variant.check = [run, a, b, n] { return check_product(*a, *b, run->staged_c.data(), n); };
      return variant;
    });
  }

  device_variant matmul_iterated(std::shared_ptr<const std::vector<float>> a,
                                 std::shared_ptr<const std::vector<float>> b, std::size_t n,
                                 int iterations) override {
    return guarded("native-naive", [&] {
      // The next multiply is enqueued from the completion callback of the one before.
      struct state {
        opencl::queue queue;
        opencl::kernel kernel;
        opencl::memory a, b, c;
        std::vector<float> result;
        std::size_t n;
        std::atomic<int> left{0};
        std::promise<void> done;
        void step() {
          const std::size_t global[2] = {n, n};
          opencl::check(clEnqueueNDRangeKernel(queue.get(), kernel.get(), 2, nullptr, global,
                                               nullptr, 0, nullptr, nullptr),
                        "clEnqueueNDRangeKernel");
          cl_event read = nullptr;
          opencl::check(
              clEnqueueReadBuffer(queue.get(), c.get(), CL_FALSE, 0, n * n * sizeof(float),
                                  result.data(), 0, nullptr, &read),
              "clEnqueueReadBuffer");
          opencl::check(clSetEventCallback(read, CL_COMPLETE, &state::completed, this),
                        "clSetEventCallback");
          clReleaseEvent(read);
          opencl::check(clFlush(queue.get()), "clFlush");
        }
        static void CL_CALLBACK completed(cl_event, cl_int, void* self) {
          auto* run = static_cast<state*>(self);
          if (run->left.fetch_sub(1) > 1) {
            run->step();
          } else {
            run->done.set_value();
          }
        }
      };
      const std::size_t bytes = n * n * sizeof(float);
      auto run = std::make_shared<state>();
      run->queue = device_.make_queue();
      run->kernel = device_.build(matmul_source.opencl, "m_mult");
      run->a = device_.allocate(bytes);
      run->b = device_.allocate(bytes);
      run->c = device_.allocate(bytes);
      run->result.resize(n * n);
      run->n = n;
      opencl::check(clEnqueueWriteBuffer(run->queue.get(), run->a.get(), CL_TRUE, 0, bytes,
                                         a->data(), 0, nullptr, nullptr),
                    "clEnqueueWriteBuffer");
      opencl::check(clEnqueueWriteBuffer(run->queue.get(), run->b.get(), CL_TRUE, 0, bytes,
                                         b->data(), 0, nullptr, nullptr),
                    "clEnqueueWriteBuffer");
      opencl::set_arguments(run->kernel.get(), run->a.get(), run->b.get(), run->c.get(),
                            static_cast<cl_uint>(n));
      device_variant variant;
      variant.prepare = [run] { std::fill(run->result.begin(), run->result.end(), -1.0f); };
      variant.run = [run, iterations] {
        run->done = std::promise<void>{};
        run->left = iterations;
        run->step();
        run->done.get_future().wait();
      };
      variant.check = [run, a, b, n] { return check_product(*a, *b, run->result.data(), n); };
      return variant;
    });
  }

  device_variant matmul_iterated_tuned(std::shared_ptr<const std::vector<float>> a,
                                       std::shared_ptr<const std::vector<float>> b, std::size_t n,
                                       int iterations) override {
    return guarded("native-tuned", [&] {
      const std::size_t bytes = n * n * sizeof(float);
      auto run = std::make_shared<kept_multiply>(device_, n * n);
      auto result = std::make_shared<std::vector<float>>(n * n);
      cl_command_queue q = run->queue.get();
      opencl::check(
          clEnqueueWriteBuffer(q, run->a.get(), CL_TRUE, 0, bytes, a->data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
      opencl::check(
          clEnqueueWriteBuffer(q, run->b.get(), CL_TRUE, 0, bytes, b->data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
      opencl::set_arguments(run->kernel.get(), run->a.get(), run->b.get(), run->c.get(),
                            static_cast<cl_uint>(n));
      device_variant variant;
      variant.prepare = [result] { std::fill(result->begin(), result->end(), -1.0f); };
      // Each product lands in pinned memory by a non-blocking read, and the next multiply is
      // enqueued once it is there; the last one is copied out, as troupe's driver copies it.
      variant.run = [run, result, n, bytes, iterations] {
        cl_command_queue queue = run->queue.get();
        const std::size_t global[2] = {n, n};
        for (int iteration = 0; iteration < iterations; ++iteration) {
          opencl::check(clEnqueueNDRangeKernel(queue, run->kernel.get(), 2, nullptr, global,
                                               nullptr, 0, nullptr, nullptr),
                        "clEnqueueNDRangeKernel");
          opencl::check(clEnqueueReadBuffer(queue, run->c.get(), CL_FALSE, 0, bytes,
                                            run->staged_c.data(), 0, nullptr, nullptr),
                        "clEnqueueReadBuffer");
          opencl::check(clFinish(queue), "clFinish");
        }
        std::memcpy(result->data(), run->staged_c.data(), bytes);
      };
      variant.check = [result, a, b, n] { return check_product(*a, *b, result->data(), n); };
      return variant;
    });
  }

  device_variant empty_stages(std::size_t count, int stages) override {
    return guarded("native-opencl", [&] { return launches_of_empty(count, stages, false); });
  }

  std::optional<device_variant> flushed_empty_stages(std::size_t count, int stages) override {
    return guarded("native-opencl-flush", [&] { return launches_of_empty(count, stages, true); });
  }

 private:
  /// What the tuned multiplies keep across runs: the queue and kernel, the device buffers a, b
  /// and c, and pinned memory that c is read into.
  struct kept_multiply {
    kept_multiply(const opencl::device& on, std::size_t count)
        : queue(on.make_queue()),
          kernel(on.build(matmul_source.opencl, "m_mult")),
          a(on.allocate(count * sizeof(float))),
          b(on.allocate(count * sizeof(float))),
          c(on.allocate(count * sizeof(float))),
          staged_c(on, count) {}
    opencl::queue queue;
    opencl::kernel kernel;
    opencl::memory a, b, c;
    opencl::pinned_memory<float> staged_c;
  };

  /// The tuned request's matrices a and b in pinned memory.
  struct pinned_inputs {
    pinned_inputs(const opencl::device& on, std::size_t count) : a(on, count), b(on, count) {}
    opencl::pinned_memory<float> a, b;
  };

  /// `stages` launches of the empty kernel, each flushed if `flush`, then a finish; before each
  /// run, untimed, one launch and a finish (see native_side::empty_stages).
  device_variant launches_of_empty(std::size_t count, int stages, bool flush) const {
    struct state {
      opencl::queue queue;
      opencl::kernel kernel;
      opencl::memory data;
    };
    auto run = std::make_shared<state>(state{device_.make_queue(),
                                             device_.build(empty_source.opencl, "empty"),
                                             device_.allocate(count * sizeof(float))});
    cl_mem data = run->data.get();
    opencl::set_arguments(run->kernel.get(), data);
    const auto launch_stages = [run, count, flush](int launches) {
      for (int stage = 0; stage < launches; ++stage) {
        // In a trace build, the same points as troupe's launches: stage_trace.py --threads
        // compares the driver's calls on this thread with those on troupe's.
        trace::record(trace::point::driver_call);
        opencl::check(clEnqueueNDRangeKernel(run->queue.get(), run->kernel.get(), 1, nullptr,
                                             &count, nullptr, 0, nullptr, nullptr),
                      "clEnqueueNDRangeKernel");
        trace::record(trace::point::driver_flush);
        if (flush) opencl::check(clFlush(run->queue.get()), "clFlush");
        trace::record(trace::point::command_enqueued);
      }
      opencl::check(clFinish(run->queue.get()), "clFinish");
    };
    device_variant variant;
    variant.prepare = [launch_stages] { launch_stages(1); };
    variant.run = [launch_stages, stages] { launch_stages(stages); };
    variant.check = [] { return std::string{}; };  // each clFinish is checked for success
    return variant;
  }

  opencl::device device_;
};

}  // namespace

std::unique_ptr<native_side> open_opencl_side(std::size_t ordinal, std::string& why) {
  auto devices = opencl::all_devices();
  if (ordinal >= devices.size()) {
    why = "no OpenCL device number " + std::to_string(ordinal);
    return nullptr;
  }
  return std::make_unique<opencl_side>(devices[ordinal]);
}

}  // namespace troupe::bench::kernel_bench
