#pragma once

// Where driver calls wait for a device: never on a scheduler worker (DESIGN.md), which tests
// check through the count kept here.

#include <atomic>
#include <cstddef>

#include "troupe/async/executor.hpp"

namespace troupe::detail {

/// Whether the calling thread is a scheduler worker (of any actor system).
inline bool on_scheduler_worker() noexcept {
  return this_thread_executor() != nullptr;
}

/// Set by a completion thread (completion_queue) for itself: it must go on polling.
inline bool& on_completion_thread() noexcept {
  thread_local bool completing = false;
  return completing;
}

/// Whether the calling thread may wait for a device: not a scheduler worker, and not a
/// completion thread. A program's own threads may.
inline bool may_wait_for_device() noexcept {
  return !on_scheduler_worker() && !on_completion_thread();
}

/// Counts the driver calls that waited for one device on a scheduler worker. There must be none:
/// each call that may wait for the device (a destructor's, an error path's) notes itself here
/// first, and the tests check that the count stays 0 where workers drop the last references.
class device_waits {
 public:
  /// A call about to wait for the device; `ended`: what it waits for has ended already, so that
  /// it returns at once.
  void note(bool ended = false) noexcept {
    if (!ended && on_scheduler_worker()) on_workers_.fetch_add(1, std::memory_order_relaxed);
  }
  /// How many calls waited on a scheduler worker so far.
  std::size_t on_workers() const noexcept { return on_workers_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::size_t> on_workers_{0};
};

}  // namespace troupe::detail
