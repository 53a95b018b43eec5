#include "troupe/core/detail/stage_trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "troupe/async/error.hpp"

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

void write(const char* path) {
  std::ofstream out{path};
  if (!out) throw error(errc::invalid_argument, std::string{"stage trace: cannot write "} + path);
  const std::size_t count = std::min(used.load(), capacity);
  for (std::size_t i = 0; i < count; ++i)
    out << entries[i].point << ' ' << entries[i].thread << ' ' << entries[i].nanoseconds << '\n';
  if (used.load() > capacity)
    out << "# " << used.load() - capacity << " records beyond the first " << capacity << " lost\n";
}

}  // namespace troupe::detail::stage_trace
