#pragma once

#include <chrono>
#include <cstddef>

#include "troupe/async/future.hpp"
#include "troupe/device/device.hpp"
#include "troupe/device/device_queue.hpp"
#include "troupe/device/program.hpp"
#include "troupe/kernel/detail/pinned_block_pool.hpp"

namespace troupe::kernel::detail {

/// One device of a kernel actor: its own in-order queue there (made with the first request),
/// the program built for it, and what the throughput policy knows of its speed.
struct device_slot {
  device dev;
  device_queue queue;
  shared_future<program> prog;
  /// The launch of the last request there: the next one runs after it, whichever queue it
  /// takes. Touched by the actor only.
  shared_future<void> last_launch;
  /// Measured seconds per work item (a moving average; 0 until the first request finished) and
  /// the work items sent there and not finished; guarded by the actor's speed mutex.
  double seconds_per_item = 0;
  std::size_t pending_items = 0;
  /// When the last request there finished: a request queued behind it ran only from then on.
  std::chrono::steady_clock::time_point last_finish{};
  /// The page-locked blocks pinned outputs are read into there. Touched by the actor only.
  pinned_block_pool pinned_outputs;
};

}  // namespace troupe::kernel::detail
