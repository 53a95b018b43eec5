#include "remote/server/memory_return.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdint>

namespace troupe::remote::server {

namespace {

using clock = std::chrono::steady_clock;

// When memory was last noted freed (clock ticks since its epoch); 0: never.
std::atomic<clock::rep> last_freed{0};

}  // namespace

void note_memory_freed() {
  last_freed.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
}

void return_freed_memory(std::chrono::milliseconds settle) {
  const clock::rep noted = last_freed.load(std::memory_order_relaxed);
  if (noted == 0) return;
  if (clock::now() - clock::time_point(clock::duration(noted)) > settle) return;
  ::malloc_trim(0);
}

}  // namespace troupe::remote::server
