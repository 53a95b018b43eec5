// The measuring side of every benchmark in bench/: command line, timing, checks, the human table
// and the CSV rows of BENCHMARKS.md. Header-only, so each executable is one compile away.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#ifndef TROUPE_SOURCE_DIR
#error "define TROUPE_SOURCE_DIR (the source tree), as bench/CMakeLists.txt does"
#endif
#ifndef TROUPE_BINARY_DIR
#error "define TROUPE_BINARY_DIR (the build tree), as bench/CMakeLists.txt does"
#endif

namespace troupe::bench {

/// Thrown for a command line that cannot be used; the message says what was expected.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The settings of one benchmark executable, read from its command line.
struct options {
  // -- member types ---------------------------------------------------------

  /// Timed runs that BENCHMARKS.md asks for at the least.
  static constexpr int minimum_runs = 10;

  // -- properties -----------------------------------------------------------

  /// Short name of the executable's suite ("savina"), which names its default CSV file.
  std::string suite;

  /// The CSV file that rows are appended to.
  std::filesystem::path csv;

  /// Timed runs per variant, after the warm-up.
  int runs = minimum_runs;

  /// Untimed runs per variant before the timed ones.
  int warmup = 2;

  /// Small sizes and few runs: a smoke test, never a result.
  bool quick = false;

  /// Names given with --only; empty runs every benchmark.
  std::vector<std::string> only;

  /// Worker threads for both sides of every comparison.
  int threads = 1;

  /// Whether --help was given; nothing runs then.
  bool help = false;

  // -- operations -----------------------------------------------------------

  /// Whether `benchmark` (a full name such as "savina_ping_pong") was selected with --only,
  /// which accepts the full name or the name without the suite prefix ("ping_pong").
  bool selected(std::string_view benchmark) const {
    if (only.empty()) return true;
    return std::any_of(only.begin(), only.end(), [&](const std::string& name) {
      return name == benchmark || suite + "_" + name == benchmark;
    });
  }
};

/// Names in --only that match none of `offered` (with or without the suite's prefix) go to
/// stderr, with the names there are; returns 2 if there was one, else `code`.
inline int report_unknown_only(const options& settings, const std::vector<std::string>& offered,
                               int code) {
  for (const std::string& name : settings.only) {
    bool known = std::any_of(offered.begin(), offered.end(), [&](const std::string& benchmark) {
      return name == benchmark || settings.suite + "_" + name == benchmark;
    });
    if (!known) {
      std::cerr << "--only: no benchmark named '" << name << "'; expected one of:";
      for (const std::string& benchmark : offered) std::cerr << ' ' << benchmark;
      std::cerr << std::endl;
      code = 2;
    }
  }
  return code;
}

/// The usage text of a benchmark executable of suite `suite`.
inline std::string usage(std::string_view suite) {
  std::ostringstream text;
  text << "usage: bench-" << suite << " [options]\n"
       << "  --csv FILE     append CSV rows to FILE (default bench/results/" << suite
       << ".csv in the source tree; with --quick, a file in the build tree)\n"
       << "  --runs N       timed runs per variant, at least " << options::minimum_runs
       << " (default " << options::minimum_runs << ")\n"
       << "  --warmup N     untimed runs per variant first (default 2)\n"
       << "  --quick        small sizes and 3 runs: a smoke test, never written to bench/results\n"
       << "  --only NAME    run only this benchmark (repeat, or separate names with commas)\n"
       << "  --threads N    worker threads of each side (default: hardware threads)\n"
       << "  --help         print this text\n";
  return text.str();
}

namespace detail {

inline int parse_count(std::string_view flag, const std::string& text, int least) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < least) {
    throw usage_error(std::string(flag) + ": expected an integer of at least " +
                      std::to_string(least) + ", found '" + text + "'");
  }
  return value;
}

// Whether `path` lies inside `folder` (both made absolute and normal first).
inline bool is_inside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  auto relative = std::filesystem::absolute(path).lexically_normal().lexically_relative(
      std::filesystem::absolute(folder).lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace detail

/// Reads the command line of the executable of suite `suite`; throws usage_error on bad input.
inline options parse_options(std::string_view suite, int argc, char** argv) {
  options result;
  result.suite = suite;
  result.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  bool runs_given = false;
  bool warmup_given = false;
  std::filesystem::path csv;
  for (int index = 1; index < argc; ++index) {
    std::string flag = argv[index];
    auto value = [&]() -> std::string {
      if (index + 1 >= argc) throw usage_error(flag + ": expected a value after it, found none");
      return argv[++index];
    };
    if (flag == "--csv") {
      csv = value();
    } else if (flag == "--runs") {
      result.runs = detail::parse_count(flag, value(), 1);
      runs_given = true;
    } else if (flag == "--warmup") {
      result.warmup = detail::parse_count(flag, value(), 0);
      warmup_given = true;
    } else if (flag == "--quick") {
      result.quick = true;
    } else if (flag == "--only") {
      std::istringstream names(value());
      for (std::string name; std::getline(names, name, ',');) {
        if (!name.empty()) result.only.push_back(name);
      }
    } else if (flag == "--threads") {
      result.threads = detail::parse_count(flag, value(), 1);
    } else if (flag == "--help" || flag == "-h") {
      result.help = true;
    } else {
      throw usage_error("unknown option '" + flag + "'; expected one of --csv, --runs, --warmup, " +
                        "--quick, --only, --threads, --help");
    }
  }
  if (result.quick) {
    if (!runs_given) result.runs = 3;
    if (!warmup_given) result.warmup = 1;
  } else if (result.runs < options::minimum_runs) {
    throw usage_error("--runs: expected at least " + std::to_string(options::minimum_runs) +
                      " timed runs (BENCHMARKS.md), found " + std::to_string(result.runs) +
                      "; use --quick for a smoke run");
  }
  std::filesystem::path results_folder = std::filesystem::path(TROUPE_SOURCE_DIR) / "bench/results";
  if (csv.empty()) {
    csv = result.quick
              ? std::filesystem::path(TROUPE_BINARY_DIR) / "bench/quick" / (result.suite + ".csv")
              : results_folder / (result.suite + ".csv");
  }
  // Smoke-test numbers must never be mistaken for results.
  if (result.quick && detail::is_inside(csv, results_folder)) {
    throw usage_error("--csv: expected a file outside " + results_folder.string() +
                      " with --quick, found " + csv.string());
  }
  result.csv = csv;
  return result;
}

/// One side of a comparison: a name (BENCHMARKS.md: "troupe", "troupe-<form>", "native" or the
/// peer's name) and a callable doing one complete run and returning the value to check.
template <class Result>
struct variant {
  std::string name;
  std::function<Result()> run;
};

/// What one variant measured: the timed runs that passed, or why it failed.
struct measurement {
  // -- properties -----------------------------------------------------------

  /// The variant's name.
  std::string variant;

  /// Seconds of each timed run, in order.
  std::vector<double> seconds;

  /// Whether every run so far returned the expected value.
  bool ok = true;

  /// What went wrong when `ok` is false.
  std::string failure;

  // -- statistics (only meaningful when ok and seconds is not empty) ---------

  double median() const {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    std::size_t middle = sorted.size() / 2;
    return sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  }
  double min() const { return *std::min_element(seconds.begin(), seconds.end()); }
  double max() const { return *std::max_element(seconds.begin(), seconds.end()); }

  /// Whether a time may be reported: the check passed and something was timed.
  bool usable() const { return ok && !seconds.empty(); }
};

/// Whether `name` is one of troupe's own variants ("troupe" or "troupe-<form>").
inline bool is_troupe(std::string_view name) {
  return name == "troupe" || name.substr(0, 7) == "troupe-";
}

namespace detail {

inline std::string run_command(const std::string& command) {
  std::string output;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
    if (::pclose(pipe) != 0) output.clear();
  }
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  return output;
}

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char character : text)
    quoted += character == '\'' ? std::string("'\\''") : std::string(1, character);
  return quoted + "'";
}

inline std::string source_commit() {
  // Binaries carried to another machine have no source tree there: the caller names the commit.
  if (const char* given = std::getenv("TROUPE_BENCH_COMMIT")) return given;
  std::string commit = run_command("git -C " + shell_quote(TROUPE_SOURCE_DIR) +
                                   " rev-parse --short HEAD 2>/dev/null");
  return commit.empty() ? "unknown" : commit;
}

inline std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) break;
    auto begin = line.find_first_not_of(" \t", colon + 1);
    if (begin != std::string::npos) return line.substr(begin);
  }
  return "unknown CPU";
}

inline std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &local);
  return text;
}

// A CSV field, quoted only where its text needs it.
inline std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char character : text)
    quoted += character == '"' ? std::string("\"\"") : std::string(1, character);
  return quoted + "\"";
}

inline std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", seconds);
  return text;
}

}  // namespace detail

/// A rate in the CSV's metric and value columns: `amount` units per run (bytes, messages)
/// divided by the median time, named `metric` ("GB/s" counts amount in bytes, 1e9 a unit).
struct rate {
  std::string metric;
  double amount = 0;
};

/// Runs comparisons for one executable: times variants side by side, prints the table and
/// appends the CSV rows.
class harness {
 public:
  // -- constructors ---------------------------------------------------------

  explicit harness(options settings)
      : options_(std::move(settings)),
        device_(detail::cpu_model() + " (" + std::to_string(options_.threads) + " threads)"),
        commit_(detail::source_commit()),
        date_(detail::today()) {}

  // -- properties -----------------------------------------------------------

  const options& settings() const { return options_; }
  bool quick() const { return options_.quick; }
  int threads() const { return options_.threads; }

  /// Whether any check failed so far.
  bool failed() const { return failed_; }

  // -- operations -----------------------------------------------------------

  /// Whether `benchmark` runs in this invocation (--only), remembering the name for finish().
  bool selected(std::string_view benchmark) {
    offered_.emplace_back(benchmark);
    return options_.selected(benchmark);
  }

  /// Times `variants` on one parameter set, alternating them run by run (A1 B1 A2 B2 ...), checks
  /// every run against `expected`, prints the table and appends one CSV row per variant, with
  /// `per_run` as the rate if given.
  template <class Result>
  std::vector<measurement> compare(const std::string& benchmark, const std::string& parameters,
                                   const std::vector<variant<Result>>& variants,
                                   const Result& expected, const rate& per_run = rate{}) {
    std::vector<measurement> measured(variants.size());
    for (std::size_t index = 0; index < variants.size(); ++index) {
      measured[index].variant = variants[index].name;
    }
    std::cout << benchmark << "  " << parameters << std::endl;
    int total = options_.warmup + options_.runs;
    for (int repetition = 0; repetition < total; ++repetition) {
      for (std::size_t index = 0; index < variants.size(); ++index) {
        measurement& result = measured[index];
        if (!result.ok) continue;  // a failed variant may be left in a broken state
        try {
          auto start = std::chrono::steady_clock::now();
          Result value = variants[index].run();
          auto stop = std::chrono::steady_clock::now();
          if (!(value == expected)) {
            std::ostringstream why;
            why << "run " << repetition + 1 << " returned " << value << ", expected " << expected;
            fail(result, why.str());
          } else if (repetition >= options_.warmup) {
            result.seconds.push_back(std::chrono::duration<double>(stop - start).count());
          }
        } catch (const std::exception& error) {
          fail(result, "run " + std::to_string(repetition + 1) + " threw: " + error.what());
        }
      }
    }
    report(benchmark, parameters, measured, per_run);
    return measured;
  }

  /// Prints the table of `measured` (timed by the caller, variants alternating run by run) and
  /// appends its CSV rows, with `per_run` as the rate if given.
  void report(const std::string& benchmark, const std::string& parameters,
              const std::vector<measurement>& measured, const rate& per_run = rate{}) {
    for (const measurement& result : measured)
      if (!result.ok) failed_ = true;
    print(measured, per_run);
    append(benchmark, parameters, measured, per_run);
  }

  /// Reports --only names that matched no benchmark; returns the process exit code.
  int finish() { return report_unknown_only(options_, offered_, failed_ ? 1 : 0); }

 private:
  void fail(measurement& result, std::string why) {
    result.ok = false;
    result.failure = std::move(why);
    failed_ = true;
  }

  static double rate_of(const rate& per_run, double seconds) {
    const double scale = per_run.metric.rfind("GB/", 0) == 0 ? 1e9 : 1.0;
    return per_run.amount / scale / seconds;
  }

  void print(const std::vector<measurement>& measured, const rate& per_run) const {
    char line[160];
    std::snprintf(line, sizeof line, "  %-16s %5s %12s %12s %12s  %s\n", "variant", "runs",
                  "median_s", "min_s", "max_s", "check");
    std::cout << line;
    for (const measurement& result : measured) {
      if (result.usable() && !per_run.metric.empty()) {
        std::snprintf(line, sizeof line, "  %-16s %5zu %12.6g %12.6g %12.6g  ok  %.4g %s\n",
                      result.variant.c_str(), result.seconds.size(), result.median(), result.min(),
                      result.max(), rate_of(per_run, result.median()), per_run.metric.c_str());
      } else if (result.usable()) {
        std::snprintf(line, sizeof line, "  %-16s %5zu %12.6g %12.6g %12.6g  ok\n",
                      result.variant.c_str(), result.seconds.size(), result.median(), result.min(),
                      result.max());
      } else {
        std::snprintf(line, sizeof line, "  %-16s %5zu %12s %12s %12s  fail: %s\n",
                      result.variant.c_str(), result.seconds.size(), "-", "-", "-",
                      result.failure.c_str());
      }
      std::cout << line;
    }
    // Each troupe variant against each baseline (the variants that are not troupe's own).
    for (const measurement& baseline : measured) {
      if (is_troupe(baseline.variant)) continue;
      for (const measurement& result : measured) {
        if (!is_troupe(result.variant)) continue;
        std::cout << "  ratio " << result.variant << '/' << baseline.variant << " (median): ";
        if (result.usable() && baseline.usable()) {
          std::snprintf(line, sizeof line, "%.3g", result.median() / baseline.median());
          std::cout << line << '\n';
        } else {
          std::cout << "n/a (a check failed)\n";
        }
      }
    }
    std::cout << std::endl;
  }

  void append(const std::string& benchmark, const std::string& parameters,
              const std::vector<measurement>& measured, const rate& per_run) const {
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
      bool usable = result.usable();
      // A failed variant's time is not used: its time fields stay empty.
      out << detail::csv_field(benchmark) << ',' << detail::csv_field(parameters) << ','
          << detail::csv_field(result.variant) << ",cpu," << detail::csv_field(device_) << ','
          << result.seconds.size() << ',' << (usable ? detail::seconds_text(result.median()) : "")
          << ',' << (usable ? detail::seconds_text(result.min()) : "") << ','
          << (usable ? detail::seconds_text(result.max()) : "") << ','
          << detail::csv_field(per_run.metric) << ','
          << (usable && !per_run.metric.empty()
                  ? detail::seconds_text(rate_of(per_run, result.median()))
                  : "")
          << ',' << (usable ? "\"ok\"" : "\"fail\"") << ',' << detail::csv_field(commit_) << ','
          << date_ << '\n';
    }
    if (!out) throw std::runtime_error("cannot write CSV rows to " + file.string());
  }

  options options_;
  std::string device_;
  std::string commit_;
  std::string date_;
  std::vector<std::string> offered_;
  bool failed_ = false;
};

/// The whole `main` of a benchmark executable: parses the command line, runs `body` with a
/// harness, and turns errors into a message and an exit code (1: a check failed, 2: bad usage).
template <class Body>
int run_main(std::string_view suite, int argc, char** argv, Body&& body) {
  try {
    options settings = parse_options(suite, argc, argv);
    if (settings.help) {
      std::cout << usage(suite);
      return 0;
    }
    harness bench{std::move(settings)};
    std::cout << "bench-" << suite << ": " << bench.threads() << " threads, "
              << bench.settings().warmup << " warm-up + " << bench.settings().runs
              << " timed runs per variant" << (bench.quick() ? " (quick)" : "") << ", CSV "
              << bench.settings().csv.string() << "\n\n";
    body(bench);
    return bench.finish();
  } catch (const usage_error& error) {
    std::cerr << "bench-" << suite << ": " << error.what() << "\n\n" << usage(suite);
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "bench-" << suite << ": " << error.what() << std::endl;
    return 1;
  }
}

}  // namespace troupe::bench
