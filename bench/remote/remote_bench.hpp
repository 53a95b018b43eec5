// What the benchmarks of bench-remote share: the two ways to one device (directly, "native", and
// through troupe's ICD and a troupe-deviced, "troupe"), the sizes of a run, and the benchmarks.
// Both sides run the same raw OpenCL C API code; only the handles differ.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "device/device_harness.hpp"
#include "device/native_opencl.hpp"

namespace troupe::bench::remote {

using program = opencl::owned<cl_program, clReleaseProgram>;

/// One way to one device: a context of its own and an in-order queue, as a program written
/// against OpenCL alone has them, and the benchmark programs built for it.
class endpoint {
 public:
  /// `variant` is the name of this side's rows ("native" or "troupe").
  endpoint(std::string variant, cl_device_id id);

  const std::string& variant() const noexcept { return variant_; }
  cl_device_id id() const noexcept { return device_.id(); }
  cl_context context() const noexcept { return device_.context(); }
  cl_command_queue queue() const noexcept { return queue_.get(); }

  /// `bytes` of device memory.
  opencl::memory allocate(std::size_t bytes) const { return device_.allocate(bytes); }

  /// Kernel `name` of `source`, which is built once per endpoint (and throws with the build log
  /// when it does not compile).
  opencl::kernel kernel(const char* source, const char* name);

 private:
  std::string variant_;
  opencl::device device_;
  opencl::queue queue_;
  std::vector<std::pair<const char*, program>> programs_;
};

/// A device query of a fixed-size value.
template <class T>
T device_info(cl_device_id id, cl_device_info what) {
  T value{};
  opencl::check(clGetDeviceInfo(id, what, sizeof value, &value, nullptr), "clGetDeviceInfo");
  return value;
}

/// Sets the arguments of `target` in order (buffers as cl_mem, scalars by value).
using opencl::set_arguments;

/// The sizes of one run, the same on every kind of device (a default run takes about three
/// minutes on 2 cores with PoCL), unless the command line changes them.
struct plan {
  bool quick = false;
  /// Launches, enqueues or clFinish calls per timed run of the latency benchmarks.
  int calls = 1000;
  /// Sizes of the transfer benchmark, in bytes.
  std::vector<std::size_t> transfer_bytes;
  /// Elements of each BabelStream array, and why they are not BabelStream's default (2^25).
  std::size_t stream_size = std::size_t{1} << 25;
  std::string stream_note;
  /// Matrix sizes of matmul, and of split.
  std::vector<std::size_t> matmul_sizes;
  std::size_t split_size = 1024;
};

/// Everything a benchmark needs: both sides, the row label and the sizes.
struct setup {
  endpoint& native;
  endpoint& troupe;
  device_label label;
  plan sizes;
  /// Device memory a single buffer may have (the smaller of the two sides').
  std::size_t max_allocation = 0;
  /// The same device through a server with TLS (--tls), or null.
  endpoint* troupe_tls = nullptr;
};

void run_latency(device_bench& bench, setup& under_test);
void run_transfer(device_bench& bench, setup& under_test);
/// Returns false when BabelStream's own check at the end fails on a side.
bool run_babelstream(device_bench& bench, setup& under_test);
void run_matmul(device_bench& bench, setup& under_test);
void run_split(device_bench& bench, setup& under_test);

}  // namespace troupe::bench::remote
