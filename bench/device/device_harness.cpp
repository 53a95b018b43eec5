#include "device/device_harness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace troupe::bench {
namespace {

void fail(measurement& result, std::string why) {
  result.ok = false;
  result.failure = std::move(why);
}

const measurement* find(const std::vector<measurement>& measured, const std::string& name) {
  auto found = std::find_if(measured.begin(), measured.end(),
                            [&](const measurement& result) { return result.variant == name; });
  return found == measured.end() ? nullptr : &*found;
}

}  // namespace

device_bench::device_bench(options settings)
    : options_(std::move(settings)), commit_(detail::source_commit()), date_(detail::today()) {}

bool device_bench::selected(std::string_view benchmark) {
  offered_.emplace_back(benchmark);
  return options_.selected(benchmark);
}

std::vector<measurement> device_bench::compare(const comparison& what) {
  std::vector<measurement> measured(what.variants.size());
  for (std::size_t index = 0; index < what.variants.size(); ++index) {
    measured[index].variant = what.variants[index].name;
    if (!what.variants[index].setup_error.empty())
      fail(measured[index], "set-up failed: " + what.variants[index].setup_error);
  }
  std::cout << what.benchmark << "  " << what.parameters << "  [" << what.device.backend << ": "
            << what.device.name << "]" << std::endl;
  const int warmup = what.warmup > 0 ? what.warmup : options_.warmup;
  const int total = warmup + (what.runs > 0 ? what.runs : options_.runs);
  for (int repetition = 0; repetition < total; ++repetition) {
    for (std::size_t index = 0; index < what.variants.size(); ++index) {
      measurement& result = measured[index];
      if (!result.ok) continue;  // a failed variant may be left in a broken state
      const device_variant& variant = what.variants[index];
      std::string run = "run " + std::to_string(repetition + 1);
      try {
        if (variant.prepare) variant.prepare();
        auto start = std::chrono::steady_clock::now();
        variant.run();
        auto stop = std::chrono::steady_clock::now();
        std::string wrong = variant.check ? variant.check() : std::string{};
        if (!wrong.empty()) {
          fail(result, run + ": " + wrong);
        } else if (repetition >= warmup) {
          result.seconds.push_back(std::chrono::duration<double>(stop - start).count() /
                                   what.operations);
        }
      } catch (const std::exception& error) {
        fail(result, run + " threw: " + error.what());
      }
    }
  }
  for (const measurement& result : measured) failed_ = failed_ || !result.ok;
  print(what, measured);
  append(what, measured);
  return measured;
}

void device_bench::skip(std::string_view benchmark, std::string_view device,
                        std::string_view why) const {
  std::cout << benchmark << "  skipped on " << device << ": " << why << "\n" << std::endl;
}

double device_bench::rate(const comparison& what, const measurement& result) {
  if (what.metric.empty() || !result.usable()) return 0;
  return what.units_per_run / (result.median() * what.operations);
}

int device_bench::finish() const {
  return report_unknown_only(options_, offered_, failed_ ? 1 : 0);
}

void device_bench::print(const comparison& what, const std::vector<measurement>& measured) const {
  const bool has_rate = !what.metric.empty();
  const char* unit = what.operations == 1 ? "s" : "s/op";
  std::printf("  %-20s %5s %12s %12s %12s %10s  %s\n", "variant", "runs",
              (std::string("median_") + unit).c_str(), (std::string("min_") + unit).c_str(),
              (std::string("max_") + unit).c_str(), has_rate ? what.metric.c_str() : "", "check");
  for (const measurement& result : measured) {
    if (result.usable()) {
      std::string rate_text;
      if (has_rate) rate_text = detail::seconds_text(rate(what, result));
      std::printf("  %-20s %5zu %12.6g %12.6g %12.6g %10s  ok\n", result.variant.c_str(),
                  result.seconds.size(), result.median(), result.min(), result.max(),
                  rate_text.c_str());
    } else {
      std::printf("  %-20s %5zu %12s %12s %12s %10s  fail: %s\n", result.variant.c_str(),
                  result.seconds.size(), "-", "-", "-", "", result.failure.c_str());
    }
  }
  for (const auto& [name, baseline_name] : what.ratios) {
    const measurement* variant = find(measured, name);
    const measurement* baseline = find(measured, baseline_name);
    if (!variant || !baseline) continue;  // a side that does not exist on this device
    std::printf("  ratio %s/%s (median): ", name.c_str(), baseline_name.c_str());
    if (variant->usable() && baseline->usable())
      std::printf("%.3g\n", variant->median() / baseline->median());
    else
      std::printf("n/a (a check failed)\n");
  }
  std::printf("\n");
  std::fflush(stdout);
}

void device_bench::append(const comparison& what, const std::vector<measurement>& measured) const {
  std::filesystem::path file = options_.csv;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  bool fresh = !std::filesystem::exists(file) || std::filesystem::file_size(file) == 0;
  std::ofstream out(file, std::ios::app);
  if (!out) throw std::runtime_error("cannot open " + file.string() + " to append CSV rows");
  if (fresh) {
    out << "benchmark,params,variant,backend,device,runs,median_s,min_s,max_s,metric,value,check,"
           "commit,date\n";
  }
  for (const measurement& result : measured) {
    // A failed variant's time is not used: its time and rate fields stay empty.
    std::string median, minimum, maximum, value;
    if (result.usable()) {
      median = detail::seconds_text(result.median());
      minimum = detail::seconds_text(result.min());
      maximum = detail::seconds_text(result.max());
      if (!what.metric.empty()) value = detail::seconds_text(rate(what, result));
    }
    out << detail::csv_field(what.benchmark) << ',' << detail::csv_field(what.parameters) << ','
        << detail::csv_field(result.variant) << ',' << detail::csv_field(what.device.backend) << ','
        << detail::csv_field(what.device.name) << ',' << result.seconds.size() << ',' << median
        << ',' << minimum << ',' << maximum << ',' << detail::csv_field(what.metric) << ',' << value
        << ',' << (result.usable() ? "\"ok\"" : "\"fail\"") << ',' << detail::csv_field(commit_)
        << ',' << date_ << '\n';
  }
  if (!out) throw std::runtime_error("cannot write CSV rows to " + file.string());
}

}  // namespace troupe::bench
