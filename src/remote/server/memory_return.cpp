#include "remote/server/memory_return.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdint>

namespace troupe::remote::server {

namespace {

using clock = std::chrono::steady_clock;

// When memory was last noted freed, and last handed back (clock ticks since its epoch; 0:
// never).
std::atomic<clock::rep> last_freed{0};
std::atomic<clock::rep> last_trim{0};

// At most this often, however short the watchdog's tick: each trim holds the arena's lock.
constexpr auto least_between_trims = std::chrono::milliseconds(500);

clock::time_point at(clock::rep ticks) {
  return clock::time_point(clock::duration(ticks));
}

}  // namespace

void note_memory_freed() {
  last_freed.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
}

void return_freed_memory(std::chrono::milliseconds settle) {
  const clock::rep noted = last_freed.load(std::memory_order_relaxed);
  const auto now = clock::now();
  if (noted == 0 || now - at(noted) > settle) return;
  if (now - at(last_trim.load(std::memory_order_relaxed)) < least_between_trims) return;
  last_trim.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  ::malloc_trim(0);
}

}  // namespace troupe::remote::server
