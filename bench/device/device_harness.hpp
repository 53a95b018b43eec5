// The measuring side of bench-device. It keeps the common harness's options, statistics and CSV
// format (common/harness.hpp) and adds what device rows need: the backend and device columns, an
// optional rate (GB/s), times per operation, checks against a CPU reference that run untimed
// after each run, and ratios between named variants (troupe-pinned against native-cuda-async).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/harness.hpp"

namespace troupe::bench {

/// One side of a device comparison.
struct device_variant {
  /// BENCHMARKS.md's variant name: "troupe", "troupe-<form>", "native-<form>".
  std::string name;
  /// One complete run, timed; it returns once the device work is complete.
  std::function<void()> run;
  /// Untimed, after every run: empty when the output matches the CPU reference, else what differs.
  std::function<std::string()> check;
  /// Untimed, before every run (optional): clears outputs, so a run that writes none fails.
  std::function<void()> prepare;
  /// Why the variant could not be set up (a failed compile, too little memory); its row then
  /// reports check=fail with this reason while the other variants still run.
  std::string setup_error;
};

/// The check of a latency variant that counts the round trips that read back a wrong value.
inline std::string wrong_round_trips(int wrong) {
  return wrong == 0 ? std::string{} : std::to_string(wrong) + " round trips read a wrong value";
}

/// The variant that `make()` returns, named `name`; if `make` throws, a variant that reports the
/// failure instead, so one side's set-up problem does not hide the other side's numbers.
template <class Make>
device_variant guarded(std::string name, Make&& make) {
  device_variant made;
  try {
    made = make();
  } catch (const std::exception& error) {
    made = device_variant{};
    made.setup_error = error.what();
  }
  made.name = std::move(name);
  return made;
}

/// What one row's backend and device columns say.
struct device_label {
  std::string backend;  // "opencl" or "cuda"
  std::string name;     // the device's name; a group of different models: the names joined by " + "
};

/// One parameter set of one benchmark on one device (or group of devices). Every member has a
/// default, so designated initializers may name only what they set.
struct comparison {
  std::string benchmark{};
  /// key=value pairs joined by ';', in a fixed order.
  std::string parameters{};
  device_label device{};
  std::vector<device_variant> variants{};
  /// (variant, baseline) pairs whose ratio of medians the table prints.
  std::vector<std::pair<std::string, std::string>> ratios{};
  /// Operations in one run: the time columns report seconds per operation (per launch).
  double operations = 1;
  /// An optional rate for the metric column: value = units_per_run / median seconds per run.
  std::string metric{};
  double units_per_run = 0;
  /// Timed and warm-up runs for this comparison alone, where the command line's would take too
  /// long (0: the command line's); the CSV's runs column says how many were timed.
  int runs = 0;
  int warmup = 0;
};

/// Runs the comparisons of bench-device: alternates the variants run by run, checks every run,
/// prints a table per comparison and appends the CSV rows of BENCHMARKS.md.
class device_bench {
 public:
  explicit device_bench(options settings);

  const options& settings() const noexcept { return options_; }
  bool quick() const noexcept { return options_.quick; }

  /// Whether `benchmark` runs in this invocation (--only), remembering the name for finish().
  bool selected(std::string_view benchmark);

  /// Times and checks `what`'s variants; returns their measurements in the same order.
  std::vector<measurement> compare(const comparison& what);

  /// Says, under the benchmark's heading, that `what` did not run on `device` and why.
  void skip(std::string_view benchmark, std::string_view device, std::string_view why) const;

  /// The rate of `result` under `what` (0 when it has none or failed).
  static double rate(const comparison& what, const measurement& result);

  /// Reports --only names that matched nothing; returns the exit code (1 when a check failed).
  int finish() const;

 private:
  void print(const comparison& what, const std::vector<measurement>& measured) const;
  void append(const comparison& what, const std::vector<measurement>& measured) const;

  options options_;
  std::string commit_;
  std::string date_;
  std::vector<std::string> offered_;
  bool failed_ = false;
};

}  // namespace troupe::bench
