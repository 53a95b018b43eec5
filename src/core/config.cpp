#include "troupe/core/config.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <thread>

#include "troupe/async/error.hpp"

namespace troupe {

namespace {

constexpr const char* hardware_threads = "one per hardware thread";
constexpr const char* no_spares = "no spares: blocking on a worker fails";

/// A count from 1 (from 0 where `zero_means` says what 0 stands for) to 100000.
std::size_t parse_count(const std::string& where, const std::string& text,
                        const char* zero_means = nullptr) {
  const bool zero_allowed = zero_means != nullptr;
  std::size_t value = 0;
  bool digits = !text.empty();
  for (char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  if (!digits || (value == 0 && !zero_allowed) || value > 100000)
    throw error(errc::invalid_argument,
                where +
                    (zero_allowed ? ": expected an integer from 0 (" + std::string{zero_means} + ")"
                                  : std::string{": expected an integer from 1"}) +
                    " to 100000, found '" + text + "'");
  return value;
}

std::string parse_completion(const std::string& where, const std::string& text) {
  if (text != "polling" && text != "callback")
    throw error(errc::invalid_argument,
                where + ": expected 'polling' or 'callback', found '" + text + "'");
  return text;
}

std::string parse_nodes(const std::string& where, const std::string& text) {
  if (text != "auto" && text != "off")
    throw error(errc::invalid_argument, where + ": expected 'auto' or 'off', found '" + text + "'");
  return text;
}

void read_environment(config& cfg) {
  if (const char* value = std::getenv("TROUPE_NODES"))
    cfg.nodes = parse_nodes("environment variable TROUPE_NODES", value);
  if (const char* value = std::getenv("TROUPE_DEVICE_COMPLETION"))
    cfg.device_completion =
        parse_completion("environment variable TROUPE_DEVICE_COMPLETION", value);
  if (const char* value = std::getenv("TROUPE_KERNEL_CACHE")) cfg.kernel_cache = value;
  if (const char* value = std::getenv("TROUPE_THREADS"))
    cfg.threads = parse_count("environment variable TROUPE_THREADS", value, hardware_threads);
  if (const char* value = std::getenv("TROUPE_THROUGHPUT"))
    cfg.throughput = parse_count("environment variable TROUPE_THROUGHPUT", value);
  if (const char* value = std::getenv("TROUPE_SPARE_THREADS"))
    cfg.spare_threads = parse_count("environment variable TROUPE_SPARE_THREADS", value, no_spares);
}

}  // namespace

config::config(int argc, const char* const* argv) {
  read_environment(*this);
  if (argc <= 0 || argv == nullptr) return;

  CLI::App app{"troupe"};
  app.allow_extras();
  app.set_help_flag();  // --help belongs to the program, not to troupe
  std::string threads_text;
  std::string throughput_text;
  std::string spares_text;
  app.add_option("--troupe.threads", threads_text);
  app.add_option("--troupe.throughput", throughput_text);
  app.add_option("--troupe.spare-threads", spares_text);
  std::string completion_text;
  app.add_option("--troupe.device-completion", completion_text);
  app.add_option("--troupe.kernel-cache", kernel_cache);
  std::string nodes_text;
  app.add_option("--troupe.nodes", nodes_text);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw error(errc::invalid_argument, std::string{"command line: "} + e.what());
  }
  if (!threads_text.empty())
    threads = parse_count("command-line option --troupe.threads", threads_text, hardware_threads);
  if (!throughput_text.empty())
    throughput = parse_count("command-line option --troupe.throughput", throughput_text);
  if (!spares_text.empty())
    spare_threads =
        parse_count("command-line option --troupe.spare-threads", spares_text, no_spares);

  if (!nodes_text.empty()) nodes = parse_nodes("command-line option --troupe.nodes", nodes_text);
  if (!completion_text.empty())
    device_completion =
        parse_completion("command-line option --troupe.device-completion", completion_text);

  remaining_args.emplace_back(argv[0]);
  for (const auto& arg : app.remaining()) {
    if (arg.rfind("--troupe.", 0) == 0)
      throw error(errc::invalid_argument,
                  "command line: unknown option '" + arg +
                      "'; troupe knows --troupe.threads, --troupe.throughput, "
                      "--troupe.spare-threads, --troupe.device-completion, "
                      "--troupe.kernel-cache and --troupe.nodes");
    remaining_args.push_back(arg);
  }
}

std::size_t config::resolved_threads() const {
  if (threads != 0) return threads;
  auto n = std::thread::hardware_concurrency();
  return n != 0 ? n : 1;
}

}  // namespace troupe
