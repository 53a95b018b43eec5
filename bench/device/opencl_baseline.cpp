// The benchmarks written against OpenCL alone: what troupe's OpenCL rows are measured against.
#include <algorithm>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "device/kernels.hpp"
#include "device/native_baseline.hpp"
#include "device/native_opencl.hpp"

namespace troupe::bench {
namespace {

using opencl::check;

class opencl_baseline final : public native_baseline {
 public:
  explicit opencl_baseline(cl_device_id id) : device_(std::make_shared<opencl::device>(id)) {}

  const std::string& device_name() const override { return device_->name(); }

  std::vector<device_variant> stencil(const stencil_problem& problem) override {
    return {stencil_from<std::vector<float>>("native-opencl", problem),
            stencil_from<opencl::pinned_memory<float>>("native-opencl-pinned", problem)};
  }

  device_variant compile(const compile_problem& problem) override {
    return guarded("native-compile", [&] {
      struct state {
        std::shared_ptr<opencl::device> device;
        std::function<std::string()> fresh_source;
        opencl::kernel kernel;
      };
      auto run = std::make_shared<state>(state{device_, problem.fresh_source, {}});
      device_variant variant;
      variant.prepare = [run] { run->kernel = opencl::kernel{}; };
      variant.run = [run] { run->kernel = run->device->build(run->fresh_source(), "stencil"); };
      variant.check = [run] { return run->kernel.get() ? "" : "no kernel was built"; };
      return variant;
    });
  }

  device_variant partition(const std::vector<native_baseline*>& group,
                           const partition_problem& problem) override {
    return guarded(problem.compute ? "native-opencl" : "native-copy-only", [&] {
      struct part {
        opencl::queue queue;
        opencl::memory memory;
        slice range;  // within the member's slice
      };
      struct member {
        std::shared_ptr<opencl::device> device;
        opencl::kernel kernel;
        std::unique_ptr<opencl::pinned_memory<float>> input;
        std::unique_ptr<opencl::pinned_memory<float>> output;
        slice range;
        std::vector<part> parts;
      };
      auto members = std::make_shared<std::vector<member>>();
      std::vector<slice> slices = split(problem.count, group.size());
      for (std::size_t index = 0; index < group.size(); ++index) {
        const auto& device = dynamic_cast<opencl_baseline&>(*group[index]).device_;
        member joined{device, {}, {}, {}, slices[index], {}};
        if (problem.compute)
          joined.kernel = device->build(kernels::partition.opencl, kernels::partition.name);
        joined.input = std::make_unique<opencl::pinned_memory<float>>(*device, joined.range.count);
        joined.output = std::make_unique<opencl::pinned_memory<float>>(*device, joined.range.count);
        fill_indices({joined.input->data(), joined.range.count}, joined.range.first);
        for (slice range : split(joined.range.count, problem.partitions))
          joined.parts.push_back(
              {device->make_queue(), device->allocate(range.count * sizeof(float)), range});
        members->push_back(std::move(joined));
      }
      device_variant variant;
      variant.prepare = [members] {
        for (member& each : *members) std::fill(each.output->begin(), each.output->end(), 0.0f);
      };
      // Every part is enqueued and flushed before any is waited for, so all of them overlap.
      variant.run = [members, compute = problem.compute] {
        for (member& each : *members) {
          for (part& piece : each.parts) {
            cl_command_queue queue = piece.queue.get();
            const std::size_t bytes = piece.range.count * sizeof(float);
            check(clEnqueueWriteBuffer(queue, piece.memory.get(), CL_FALSE, 0, bytes,
                                       each.input->data() + piece.range.first, 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
            if (compute) {
              // Arguments are captured at enqueue time, so one kernel serves every part.
              opencl::set_arguments(each.kernel.get(), piece.memory.get(),
                                    static_cast<cl_uint>(piece.range.count));
              check(clEnqueueNDRangeKernel(queue, each.kernel.get(), 1, nullptr, &piece.range.count,
                                           nullptr, 0, nullptr, nullptr),
                    "clEnqueueNDRangeKernel");
            }
            check(clEnqueueReadBuffer(queue, piece.memory.get(), CL_FALSE, 0, bytes,
                                      each.output->data() + piece.range.first, 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
            check(clFlush(queue), "clFlush");
          }
        }
        for (member& each : *members)
          for (part& piece : each.parts) check(clFinish(piece.queue.get()), "clFinish");
      };
      variant.check = [members, compare = problem.check] {
        return partition_problem::check_slices(compare, *members);
      };
      return variant;
    });
  }

  device_variant launch_latency(int launches) override {
    return guarded("native-opencl", [&] {
      struct state {
        std::shared_ptr<opencl::device> device;
        opencl::queue queue;
        opencl::kernel kernel;
        opencl::memory counter;
      };
      auto run = std::make_shared<state>(state{device_, device_->make_queue(),
                                               device_->build(kernels::tick.opencl, "tick"),
                                               device_->allocate(sizeof(cl_int))});
      opencl::set_arguments(run->kernel.get(), run->counter.get());
      device_variant variant;
      variant.prepare = [run] {
        const cl_int zero = 0;
        check(clEnqueueWriteBuffer(run->queue.get(), run->counter.get(), CL_TRUE, 0, sizeof zero,
                                   &zero, 0, nullptr, nullptr),
              "clEnqueueWriteBuffer");
      };
      variant.run = [run, launches] {
        const std::size_t one = 1;
        for (int launch = 0; launch < launches; ++launch) {
          check(clEnqueueNDRangeKernel(run->queue.get(), run->kernel.get(), 1, nullptr, &one,
                                       nullptr, 0, nullptr, nullptr),
                "clEnqueueNDRangeKernel");
          check(clFinish(run->queue.get()), "clFinish");
        }
      };
      variant.check = [run, launches] {
        cl_int counted = 0;
        check(clEnqueueReadBuffer(run->queue.get(), run->counter.get(), CL_TRUE, 0, sizeof counted,
                                  &counted, 0, nullptr, nullptr),
              "clEnqueueReadBuffer");
        return counted == launches ? std::string{}
                                   : "the counter reads " + std::to_string(counted) +
                                         ", expected " + std::to_string(launches);
      };
      return variant;
    });
  }

  device_variant copy_latency(int round_trips) override {
    return guarded("native-opencl", [&] {
      struct state {
        std::shared_ptr<opencl::device> device;
        opencl::queue queue;
        opencl::memory value;
        int wrong = 0;
      };
      auto run = std::make_shared<state>(
          state{device_, device_->make_queue(), device_->allocate(sizeof(cl_int)), 0});
      device_variant variant;
      variant.prepare = [run] { run->wrong = 0; };
      variant.run = [run, round_trips] {
        for (cl_int sent = 0; sent < round_trips; ++sent) {
          cl_int received = -1;
          check(clEnqueueWriteBuffer(run->queue.get(), run->value.get(), CL_FALSE, 0, sizeof sent,
                                     &sent, 0, nullptr, nullptr),
                "clEnqueueWriteBuffer");
          check(clEnqueueReadBuffer(run->queue.get(), run->value.get(), CL_FALSE, 0,
                                    sizeof received, &received, 0, nullptr, nullptr),
                "clEnqueueReadBuffer");
          check(clFinish(run->queue.get()), "clFinish");
          if (received != sent) ++run->wrong;
        }
      };
      variant.check = [run] { return wrong_round_trips(run->wrong); };
      return variant;
    });
  }

  device_variant mandelbrot(const mandelbrot_problem& problem) override {
    return guarded("native-opencl", [&] {
      struct state {
        std::shared_ptr<opencl::device> device;
        opencl::queue queue;
        opencl::kernel kernel;
        opencl::memory image;
        mandelbrot_problem problem;
        std::vector<std::vector<std::uint8_t>> frames;
      };
      const std::size_t bytes = std::size_t{3} * problem.width * problem.height;
      auto run = std::make_shared<state>(
          state{device_, device_->make_queue(),
                device_->build(kernels::mandelbrot.opencl, kernels::mandelbrot.name),
                device_->allocate(bytes), problem,
                std::vector<std::vector<std::uint8_t>>(problem.frames.size(),
                                                       std::vector<std::uint8_t>(bytes))});
      device_variant variant;
      variant.prepare = [run] {
        for (auto& frame : run->frames) std::fill(frame.begin(), frame.end(), std::uint8_t{0});
      };
      variant.run = [run, bytes] {
        const mandelbrot_problem& frames = run->problem;
        const std::size_t global[2] = {frames.width, frames.height};
        for (std::size_t index = 0; index < frames.frames.size(); ++index) {
          const view& shown = frames.frames[index];
          opencl::set_arguments(run->kernel.get(), run->image.get(), cl_uint{frames.width},
                                cl_uint{frames.height}, shown.x0, shown.y0, shown.step);
          check(clEnqueueNDRangeKernel(run->queue.get(), run->kernel.get(), 2, nullptr, global,
                                       nullptr, 0, nullptr, nullptr),
                "clEnqueueNDRangeKernel");
          check(clEnqueueReadBuffer(run->queue.get(), run->image.get(), CL_TRUE, 0, bytes,
                                    run->frames[index].data(), 0, nullptr, nullptr),
                "clEnqueueReadBuffer");
          frames.save(run->frames[index], index, "native-opencl");
        }
      };
      variant.check = [run] { return run->problem.check_all(run->frames); };
      return variant;
    });
  }

 private:
  // Write the input, run the stencil, read the output, one wait: an in-order queue needs no
  // events. From and to pageable memory (std::vector, allocated as troupe's side allocates it)
  // or pinned memory (pinned_memory: a mapped CL_MEM_ALLOC_HOST_PTR buffer), as `Host` says.
  template <class Host>
  device_variant stencil_from(const std::string& name, const stencil_problem& problem) {
    return guarded(name, [&] {
      struct state {
        state(std::shared_ptr<opencl::device> on, std::span<const float> values)
            : device(std::move(on)),
              queue(device->make_queue()),
              kernel(device->build(kernels::stencil.opencl, "stencil")),
              input(device->allocate(values.size_bytes())),
              output(device->allocate(values.size_bytes())),
              source(make(*device, values.size())),
              result(make(*device, values.size())) {
          std::copy(values.begin(), values.end(), source.begin());
        }
        static Host make(const opencl::device& on, std::size_t count) {
          if constexpr (std::is_same_v<Host, std::vector<float>>)
            return Host(count);
          else
            return Host(on, count);
        }
        std::shared_ptr<opencl::device> device;
        opencl::queue queue;
        opencl::kernel kernel;
        opencl::memory input;
        opencl::memory output;
        Host source;
        Host result;
      };
      const std::size_t count = problem.input.size();
      auto run = std::make_shared<state>(device_, problem.input);
      opencl::set_arguments(run->kernel.get(), run->input.get(), run->output.get(),
                            static_cast<cl_uint>(count));
      device_variant variant;
      variant.prepare = [run] {
        std::fill(run->result.begin(), run->result.end(), std::numeric_limits<float>::quiet_NaN());
      };
      variant.run = [run, count] {
        const std::size_t bytes = count * sizeof(float);
        cl_command_queue queue = run->queue.get();
        check(clEnqueueWriteBuffer(queue, run->input.get(), CL_FALSE, 0, bytes, run->source.data(),
                                   0, nullptr, nullptr),
              "clEnqueueWriteBuffer");
        check(clEnqueueNDRangeKernel(queue, run->kernel.get(), 1, nullptr, &count, nullptr, 0,
                                     nullptr, nullptr),
              "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(queue, run->output.get(), CL_FALSE, 0, bytes, run->result.data(),
                                  0, nullptr, nullptr),
              "clEnqueueReadBuffer");
        check(clFinish(queue), "clFinish");
      };
      variant.check = [run, count, compare = problem.check] {
        return compare(std::span<const float>(run->result.data(), count));
      };
      return variant;
    });
  }

  std::shared_ptr<opencl::device> device_;
};

}  // namespace

std::unique_ptr<native_baseline> open_opencl_baseline(std::size_t index,
                                                      const std::string& expected_name,
                                                      std::string& why) {
  try {
    std::vector<cl_device_id> devices = opencl::all_devices();
    if (index >= devices.size()) {
      why = "OpenCL lists " + std::to_string(devices.size()) + " devices, troupe more";
      return nullptr;
    }
    std::string name = opencl::device_name(devices[index]);
    if (name != expected_name) {
      why = "OpenCL's device " + std::to_string(index) + " is '" + name + "', troupe's '" +
            expected_name + "'";
      return nullptr;
    }
    return std::make_unique<opencl_baseline>(devices[index]);
  } catch (const std::exception& error) {
    why = error.what();
    return nullptr;
  }
}

}  // namespace troupe::bench
