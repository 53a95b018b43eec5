// troupe-tour: the first program to run after building troupe. It exercises every capability of
// this build on the machine's defaults, prints section by section what it did and what came
// out, checks every result against an expectation computed independently, and exits with 1 if
// any check fails (2 on a bad command line).
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tour.hpp"

namespace tour {
namespace {

// -- configuration ----------------------------------------------------------------

/// Where a setting came from, by troupe::config's precedence: command line, environment, default.
std::string source_of(const std::vector<std::string>& args, const std::string& option,
                      const char* variable) {
  for (const auto& arg : args)
    if (arg == option || arg.rfind(option + "=", 0) == 0)
      return "the command line (" + option + ")";
  if (const char* value = std::getenv(variable))
    return text("the environment (", variable, "=", value, ")");
  return "the default";
}

/// Posts `count` jobs that each wait until all have started, and returns how many distinct
/// threads ran them: with `count` workers, all of them.
std::size_t concurrent_workers(troupe::executor& executor, std::size_t count) {
  std::mutex mutex;
  std::condition_variable changed;
  std::set<std::thread::id> threads;
  std::size_t started = 0;
  std::size_t finished = 0;
  for (std::size_t i = 0; i < count; ++i)
    executor.post([&] {
      std::unique_lock lock{mutex};
      threads.insert(std::this_thread::get_id());
      ++started;
      changed.notify_all();
      changed.wait_for(lock, patience, [&] { return started == count; });
      ++finished;
      changed.notify_all();
    });
  std::unique_lock lock{mutex};
  changed.wait(lock, [&] { return finished == count; });  // the jobs use these locals
  return threads.size();
}

void tour_configuration(troupe::actor_system& system, const std::vector<std::string>& args,
                        report& out) {
  out.section("configuration");
  const auto& settings = system.settings();
  auto workers = settings.resolved_threads();
  auto source = source_of(args, "--troupe.threads", "TROUPE_THREADS");
  if (settings.threads == 0)
    source += text(": one per hardware thread, and this machine has ",
                   std::thread::hardware_concurrency());
  out.note(text("worker threads: ", workers, ", from ", source));
  auto probed = std::min<std::size_t>(workers, 256);
  auto seen = concurrent_workers(system.default_executor(), probed);
  out.check(seen == probed, text(counted(probed, "job"), " ran at the same time on ",
                                 counted(seen, "distinct worker thread")));
  out.note(text("throughput: ", settings.throughput, " messages per actor turn, from ",
                source_of(args, "--troupe.throughput", "TROUPE_THROUGHPUT")));
}

// -- backends and the command line --------------------------------------------------

void tour_backends(report& out) {
  out.section("optional backends");
  std::vector<std::string> present;
  std::vector<std::string> absent;
  (TROUPE_WITH_OPENCL ? present : absent).push_back("OpenCL");
  (TROUPE_WITH_CUDA ? present : absent).push_back("CUDA");
  (TROUPE_WITH_MPI ? present : absent).push_back("MPI");
  auto list = [](const std::vector<std::string>& names) {
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
    return joined.empty() ? std::string{"none"} : joined;
  };
  out.note(text("compiled in: ", list(present), "; left out: ", list(absent)));
  out.note("the device layer uses OpenCL and CUDA; the pgas layer uses MPI");
}

void print_usage(const char* program) {
  troupe::config defaults;
  std::cout
      << "usage: " << program << " [--troupe.threads=N] [--troupe.throughput=N] [--help]\n\n"
      << "Runs every capability of this troupe build on this machine, prints what it did and\n"
      << "checks every result. Exits with 0 if all checks pass, 1 if one fails, 2 on a bad\n"
      << "command line.\n\n"
      << "  --troupe.threads=N     worker threads (environment: TROUPE_THREADS; default: one per\n"
      << "                         hardware thread, " << defaults.resolved_threads() << " here)\n"
      << "  --troupe.throughput=N  messages an actor handles before it lets others run\n"
      << "                         (environment: TROUPE_THROUGHPUT; default: "
      << defaults.throughput << ")\n"
      << "  --help                 print this and exit\n";
}

}  // namespace
}  // namespace tour

int main(int argc, char** argv) {
  using namespace tour;
#if TROUPE_WITH_MPI
  if (argc > 1 && std::string(argv[1]) == pgas_pe_flag) return run_pgas_pe(argc, argv);
#endif
  std::vector<std::string> args(argv, argv + argc);
  troupe::config settings;
  try {
    settings = troupe::config{argc, argv};
  } catch (const troupe::error& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 2;
  }
  for (std::size_t i = 1; i < settings.remaining_args.size(); ++i) {
    const auto& arg = settings.remaining_args[i];
    if (arg == "--help" || arg == "-h") {
      print_usage(argv[0]);
      return 0;
    }
    std::cerr << argv[0] << ": unknown argument '" << arg << "' (try --help)\n";
    return 2;
  }

  std::cout << "troupe tour: every capability of this build, on this machine's defaults"
            << std::endl;
  report out;
  {
    troupe::actor_system system{settings};
    // A section that throws (a wait that ran out, say) counts as a failed check; the rest run.
    auto run = [&](const char* name, auto&& section) {
      try {
        section();
      } catch (const std::exception& e) {
        out.check(false, text(name, " stopped: ", e.what()));
      }
    };
    run("configuration", [&] { tour_configuration(system, args, out); });
    run("futures", [&] { tour_futures(system, out); });
    run("actor basics", [&] { tour_actor_basics(system, out); });
    run("requests", [&] { tour_requests(system, out); });
    run("failures", [&] { tour_failures(system, out); });
    run("composition", [&] { tour_composition(system, out); });
    run("registry", [&] { tour_registry(system, out); });
    run("scoped_actor", [&] { tour_scoped_actor(system, out); });
    run("workload", [&] { tour_workload(system, out); });
    run("devices", [&] { tour_devices(system, out); });
    run("kernel actors", [&] { tour_kernel_actors(system, out); });
  }
  tour_pgas(std::filesystem::read_symlink("/proc/self/exe").string(), out);
  tour_backends(out);

  std::cout << "\n";
  if (out.failures() == 0) {
    std::cout << "troupe tour: all " << out.checks() << " checks passed" << std::endl;
    return 0;
  }
  std::cout << "troupe tour: " << out.failures() << " of " << out.checks() << " checks FAILED"
            << std::endl;
  return 1;
}
