#include "troupe/support/stage_trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>

namespace troupe::detail::stage_trace {

namespace {

struct entry {
  std::uint16_t point;
  std::uint16_t thread;
  std::int64_t nanoseconds;
};

constexpr std::size_t capacity = std::size_t{1} << 21;
// Static, so that recording never allocates; 32 MiB in a diagnostic build only.
entry entries[capacity];
std::atomic<std::size_t> used{0};
std::atomic<std::uint16_t> threads{0};

}  // namespace

void record(point p, unsigned extra) noexcept {
  thread_local const std::uint16_t thread = threads.fetch_add(1, std::memory_order_relaxed);
  const std::size_t at = used.fetch_add(1, std::memory_order_relaxed);
  if (at >= capacity) return;
  entries[at] = {static_cast<std::uint16_t>(static_cast<unsigned>(p) + extra), thread,
                 std::chrono::steady_clock::now().time_since_epoch().count()};
}

/// The points' names, written into each trace so that stage_trace.py needs no copy of the enum.
const char* name_of(point p) {
  switch (p) {
    case point::message_taken:
      return "message taken";
    case point::request_run:
      return "request run";
    case point::launch_called:
      return "launch called";
    case point::command_submitted:
      return "command submitted";
    case point::command_issuing:
      return "command issuing";
    case point::driver_call:
      return "driver call";
    case point::driver_flush:
      return "driver flush";
    case point::command_enqueued:
      return "command enqueued";
    case point::responding:
      return "responding";
    case point::responded:
      return "responded";
    case point::message_done:
      return "message done";
    case point::waiter_done:
      return "waiter done";
    case point::chunk_arrived:
      return "chunk arrived";
    case point::chunk_copied:
      return "chunk copied";
    case point::command_done:
      return "command done";
    case point::command_completing:
      return "command completing";
    case point::command_completed:
      return "command completed";
    case point::run_begin:
      return "run begin";
  }
  return "unknown";
}

void write(const char* path) {
  std::ofstream out{path};
  if (!out) throw std::runtime_error(std::string{"stage trace: cannot write "} + path);
  for (unsigned p = 1; p <= static_cast<unsigned>(point::command_completed); ++p)
    out << "# point " << p << ' ' << name_of(static_cast<point>(p)) << '\n';
  out << "# point " << static_cast<unsigned>(point::run_begin) << ' ' << name_of(point::run_begin)
      << '\n';
  const std::size_t count = std::min(used.load(), capacity);
  for (std::size_t i = 0; i < count; ++i)
    out << entries[i].point << ' ' << entries[i].thread << ' ' << entries[i].nanoseconds << '\n';
  if (used.load() > capacity)
    out << "# lost " << used.load() - capacity << " records beyond the first " << capacity << '\n';
  out.flush();
  if (!out) throw std::runtime_error(std::string{"stage trace: writing "} + path + " failed");
}

}  // namespace troupe::detail::stage_trace
