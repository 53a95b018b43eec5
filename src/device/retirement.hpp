#pragma once

// Where driver objects go whose last reference a thread other than the completion thread would
// drop: events where the driver charges for calls beside the launching thread, and queues, whose
// destruction waits for the device.

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "device/backend.hpp"

namespace troupe::detail {

/// Events and queues that another thread would drop, kept for the completion thread to drop once
/// it is idle.
/// - Events: NVIDIA's OpenCL took 10 to 25 µs to release an event on a worker while the
///   completion thread launched a pipeline's kernels, and those launches slowed meanwhile: about
///   1 µs a stage of bench-kernel's 20-stage empty pipeline on an H100.
/// - Queues: a backend queue's destructor waits for the device (clFinish), which no scheduler
///   worker may do. Every command on it has ended by then (queue_state), so it returns at once.
class retirement final : public ref_counted {
 public:
  /// `wake` is called when the first event or queue comes, so that a sleeping thread drops it.
  explicit retirement(std::function<void()> wake) : wake_(std::move(wake)) {}

  /// Keeps `event` for release_all(); drops it here once closed.
  void release_later(event_ptr event) noexcept;
  /// Keeps `queue` for release_all(); drops it here once closed, when the device is idle.
  void release_later(std::unique_ptr<backend_queue> queue) noexcept;
  /// How many events and queues are kept; read without the lock.
  std::size_t waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }
  /// Drops the events and queues kept so far.
  void release_all() noexcept;
  /// Drops what is kept, and from now on each event and queue release_later() is given.
  void close() noexcept;

 private:
  /// Under mutex_: counts what is kept, and wakes the thread for the first.
  void kept() noexcept;

  std::mutex mutex_;
  std::function<void()> wake_;                          // guarded by mutex_; empty once closed
  std::vector<event_ptr> events_;                       // guarded by mutex_
  std::vector<std::unique_ptr<backend_queue>> queues_;  // guarded by mutex_
  std::atomic<std::size_t> waiting_{0};
};

}  // namespace troupe::detail
