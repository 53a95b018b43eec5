// The native side of bench-device: each benchmark written once against raw OpenCL
// (opencl_baseline.cpp) and once against the raw CUDA driver API (cuda_baseline.cpp). The
// benchmarks describe their problems here, with the check against the CPU reference; a baseline
// turns a problem into variants that run it the way a program using that API alone would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "device/device_harness.hpp"

namespace troupe::bench {

/// A run of consecutive elements: [first, first + count).
struct slice {
  std::size_t first = 0;
  std::size_t count = 0;
};

/// `count` elements split into `parts` slices, as even as may be, in order.
std::vector<slice> split(std::size_t count, std::size_t parts);

/// Writes first, first + 1, ...: the partition benchmark's input is each element's index.
void fill_indices(std::span<float> values, std::size_t first);

/// The stencil over `input`, written, computed and read back in every run.
struct stencil_problem {
  std::span<const float> input;
  /// Empty when `output` is the CPU reference's result.
  std::function<std::string(std::span<const float> output)> check;
};

/// Building the stencil program, timed on its own.
struct compile_problem {
  /// The source to build, in the device's language; each call names one more kernel, so that no
  /// compiler or driver cache has seen it and every run compiles for real.
  std::function<std::string()> fresh_source;
};

/// HPXCL's partition benchmark over a group of devices: each device takes one slice of the
/// elements and splits it into `partitions` parts, each copied in, computed and copied back on
/// its own queue (stream), from and to pinned host memory.
struct partition_problem {
  /// Elements over all devices.
  std::size_t count = 0;
  /// Parts per device.
  std::size_t partitions = 4;
  /// False for the copies alone, the bandwidth the partition benchmark is measured against.
  bool compute = true;
  /// Empty when `output`, the results of the elements from `first` on, is right.
  std::function<std::string(std::span<const float> output, std::size_t first)> check;

  /// check() over each device's slice (`output`, a pointer to its results, and `range`): the
  /// first problem found, or empty.
  template <class Slices>
  static std::string check_slices(const decltype(check)& check_one, const Slices& slices) {
    for (const auto& each : slices) {
      std::string wrong = check_one({each.output->data(), each.range.count}, each.range.first);
      if (!wrong.empty()) return wrong;
    }
    return {};
  }
};

/// The part of the complex plane one Mandelbrot frame shows: pixel (px, py) is the point
/// (x0 + px·step, y0 + py·step).
struct view {
  float x0 = 0;
  float y0 = 0;
  float step = 0;
};

/// A sequence of Mandelbrot frames: each computed, read back and saved as a PNG.
struct mandelbrot_problem {
  unsigned width = 0;
  unsigned height = 0;
  std::vector<view> frames;
  /// Writes frame `frame` of `variant` as a PNG.
  std::function<void(std::span<const std::uint8_t> rgb, std::size_t frame,
                     const std::string& variant)>
      save;
  /// Empty when frame `frame` matches the CPU reference closely enough.
  std::function<std::string(std::span<const std::uint8_t> rgb, std::size_t frame)> check;

  /// check() over all frames: the first problem found, or empty.
  template <class Frames>
  std::string check_all(const Frames& rgb_frames) const {
    for (std::size_t index = 0; index < rgb_frames.size(); ++index) {
      std::string wrong = check(rgb_frames[index], index);
      if (!wrong.empty()) return wrong;
    }
    return {};
  }
};

/// The benchmarks against one API on one device.
class native_baseline {
 public:
  virtual ~native_baseline() = default;

  /// The device's name as the API reports it.
  virtual const std::string& device_name() const = 0;

  /// native-opencl (pageable memory) and native-opencl-pinned (pinned memory), each with
  /// non-blocking copies and one wait; or native-cuda-sync (pageable memory, synchronous copies)
  /// and native-cuda-async (pinned memory, one stream).
  virtual std::vector<device_variant> stencil(const stencil_problem& problem) = 0;

  /// native-compile: source to a launchable kernel.
  virtual device_variant compile(const compile_problem& problem) = 0;

  /// The partition problem over `group` (this baseline and others of the same API); named
  /// native-opencl or native-cuda, or native-copy-only without the kernel.
  virtual device_variant partition(const std::vector<native_baseline*>& group,
                                   const partition_problem& problem) = 0;

  /// `launches` launches of the tick kernel, each waited for before the next.
  virtual device_variant launch_latency(int launches) = 0;

  /// `round_trips` 4-byte writes, each followed by a read and a wait.
  virtual device_variant copy_latency(int round_trips) = 0;

  /// Frame by frame: compute, read back, save.
  virtual device_variant mandelbrot(const mandelbrot_problem& problem) = 0;
};

/// The baseline for the OpenCL device at `index` in OpenCL's own order (the order troupe lists
/// its OpenCL devices in); null, with `why`, when that device is not `expected_name`.
std::unique_ptr<native_baseline> open_opencl_baseline(std::size_t index,
                                                      const std::string& expected_name,
                                                      std::string& why);

/// The baseline for CUDA device `ordinal`; null, with `why`, when the driver or NVRTC cannot be
/// loaded, or the device is not `expected_name`. Defined only where CUDA's headers were found.
std::unique_ptr<native_baseline> open_cuda_baseline(int ordinal, const std::string& expected_name,
                                                    std::string& why);

}  // namespace troupe::bench
