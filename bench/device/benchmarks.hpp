// The benchmarks of bench-device and what they share: the devices under test, each with the
// native baseline of its API where one could be opened.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "device/device_harness.hpp"
#include "device/native_baseline.hpp"
#include "troupe/device.hpp"

namespace troupe::bench {

/// One device under test.
struct target {
  troupe::device device;
  /// Position in actor_system::devices(), which lists devices in the same order in every actor
  /// system of the process.
  std::size_t index = 0;
  /// The same device driven by its API alone; null when it could not be opened.
  std::unique_ptr<native_baseline> native;
  /// Why `native` is null.
  std::string native_missing;

  /// The backend and device columns of this device's rows.
  device_label label() const;
  /// Whether --quick shrinks sizes further here: CPU devices (PoCL) are slow at the large ones.
  bool small() const { return device.info().type != troupe::device_type::gpu; }
  /// Whether `bytes` of device memory, all variants together, fit comfortably.
  bool fits(std::size_t bytes) const { return bytes <= device.info().global_memory / 2; }
};

/// Where the Mandelbrot PNGs go.
struct png_settings {
  /// Empty: a fresh folder under the system's temporary directory.
  std::filesystem::path folder;
  /// Whether the PNGs stay after the run.
  bool keep = false;
};

void run_stencil(device_bench& bench, const std::vector<target>& targets);
void run_partition(device_bench& bench, const std::vector<target>& targets);
void run_multi_partition(device_bench& bench, const std::vector<target>& targets);
void run_launch_latency(device_bench& bench, const std::vector<target>& targets);
void run_copy_latency(device_bench& bench, const std::vector<target>& targets);
/// Builds two more actor systems from `config`, one per completion mode.
void run_completion(device_bench& bench, const std::vector<target>& targets,
                    const troupe::config& config);
void run_mandelbrot(device_bench& bench, const std::vector<target>& targets,
                    const png_settings& png);

/// A problem's check for a float output: empty when every value is within `tolerance` of
/// `expected(index)` (relative, absolute for expected values below 1), else the first difference
/// and how many there are.
template <class Expected>
std::string compare_floats(std::span<const float> output, double tolerance, Expected expected) {
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t index = 0; index < output.size(); ++index) {
    const double want = expected(index);
    const double got = output[index];
    // Written so that NaN, which outputs are cleared to, fails.
    if (!(std::abs(got - want) <= tolerance * std::max(std::abs(want), 1.0))) {
      if (wrong++ == 0)
        first = "element " + std::to_string(index) + " is " + std::to_string(got) + ", expected " +
                std::to_string(want);
    }
  }
  if (wrong == 0) return {};
  return first + " (" + std::to_string(wrong) + " of " + std::to_string(output.size()) +
         " elements differ)";
}

}  // namespace troupe::bench
