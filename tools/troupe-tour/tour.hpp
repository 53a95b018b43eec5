#pragma once

// troupe-tour's parts, one file per layer it tours: the report every section prints to, waiting
// with a limit, and the sections that main.cpp runs in order.
#include <chrono>
#include <cstddef>
#include <future>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "troupe/troupe.hpp"

#if !defined(TROUPE_WITH_OPENCL) || !defined(TROUPE_WITH_CUDA) || !defined(TROUPE_WITH_MPI)
#error "tools/troupe-tour/CMakeLists.txt defines TROUPE_WITH_OPENCL, _CUDA and _MPI as 0 or 1"
#endif

namespace tour {

using clock_type = std::chrono::steady_clock;

// -- output -------------------------------------------------------------------

/// The parts, streamed one after the other into one string.
template <class... Ts>
std::string text(const Ts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// "12.3 ms".
inline std::string milliseconds(clock_type::duration elapsed) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1)
      << std::chrono::duration<double, std::milli>(elapsed).count() << " ms";
  return out.str();
}

/// "1 job", "2 jobs".
inline std::string counted(std::size_t count, const std::string& noun) {
  return text(count, " ", noun, count == 1 ? "" : "s");
}

/// Prints the tour section by section and counts the checks that failed.
class report {
 public:
  void section(const std::string& title) { std::cout << "\n" << title << std::endl; }

  /// Context that is not itself a check.
  void note(const std::string& line) { std::cout << "          " << line << std::endl; }

  /// A result, and whether it is what was expected.
  void check(bool passed, const std::string& line) {
    std::cout << (passed ? "  ok      " : "  FAILED  ") << line << std::endl;
    ++checks_;
    if (!passed) ++failures_;
  }

  int checks() const { return checks_; }
  int failures() const { return failures_; }

 private:
  int checks_ = 0;
  int failures_ = 0;
};

// -- waiting with a limit ---------------------------------------------------------
// A tour that hangs tells the user nothing, so every wait gives up after a while.

/// How long any one wait of the tour lasts at most.
inline constexpr std::chrono::seconds patience{20};

/// The future's value; throws if it is not ready within `patience`.
template <class T>
T await(troupe::future<T> f) {
  if (f.wait_for(patience) != std::future_status::ready)
    throw std::runtime_error(text("a future was not ready within ", patience.count(), " s"));
  return f.get();
}

/// How a future ended: its error code and message if it failed.
struct outcome {
  bool failed = false;
  troupe::errc code = troupe::errc::none;  // none also for exceptions other than troupe::error
  std::string message;
};

/// Waits for `f` and says how it ended, instead of throwing.
template <class T>
outcome outcome_of(troupe::future<T> f) {
  try {
    await(std::move(f));
    return {};
  } catch (const troupe::error& e) {
    return {true, e.code(), e.what()};
  } catch (const std::exception& e) {
    return {true, troupe::errc::none, e.what()};
  }
}

/// Runs `f` as a job on `executor` and returns the future of its result.
template <class F>
auto run_on(troupe::executor& executor, F f) {
  return troupe::make_ready_future().then(executor, std::move(f));
}

// -- the sections main.cpp runs, in its order ----------------------------------------

/// then, unwrapping, when_all, when_any, dataflow and failures (tour_async.cpp).
void tour_futures(troupe::actor_system& system, report& out);
/// Spawn, state and become (tour_core.cpp, as are the actor sections below).
void tour_actor_basics(troupe::actor_system& system, report& out);
/// Requests between actors: request.then, delegate, response promises, timeouts.
void tour_requests(troupe::actor_system& system, report& out);
/// Exceptions, monitors, links and exit reasons.
void tour_failures(troupe::actor_system& system, report& out);
/// A pipeline of actors composed with `*`.
void tour_composition(troupe::actor_system& system, report& out);
/// Actors found by name.
void tour_registry(troupe::actor_system& system, report& out);
/// main as an actor: send and receive with a timeout.
void tour_scoped_actor(troupe::actor_system& system, report& out);
/// A fork-join sum over thousands of actors against a plain loop (tour_workload.cpp).
void tour_workload(troupe::actor_system& system, report& out);
/// Every device, and a futurized saxpy on each (tour_device.cpp).
void tour_devices(troupe::actor_system& system, report& out);
/// A pipeline of three kernel actors on device memory, on each device (tour_kernel.cpp).
void tour_kernel_actors(troupe::actor_system& system, report& out);
/// A histogram on 4 PEs: this program, `self`, started again under MPI (tour_pgas.cpp).
void tour_pgas(const std::string& self, report& out);

/// The flag that makes this program one PE of the tour's MPI job instead of the tour.
inline constexpr const char* pgas_pe_flag = "--troupe-tour-pgas-pe";
#if TROUPE_WITH_MPI
/// One PE of the histogram's MPI job; its exit status says whether the table came out right.
int run_pgas_pe(int argc, char** argv);
#endif

}  // namespace tour
