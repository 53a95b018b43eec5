#pragma once

// Where the last reference to a device event goes when the driver charges for calls made beside
// the thread that launches.

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "device/backend.hpp"

namespace troupe::detail {

/// Events whose last reference another thread would drop, kept for the completion thread to
/// drop once it is idle. NVIDIA's OpenCL took 10 to 25 µs to release an event on a worker while
/// the completion thread launched a pipeline's kernels, and those launches slowed meanwhile: about
/// 1 µs a stage of bench-kernel's 20-stage empty pipeline on an H100.
class event_retirement final : public ref_counted {
 public:
  /// `wake` is called when the first event comes, so that a sleeping thread drops it.
  explicit event_retirement(std::function<void()> wake) : wake_(std::move(wake)) {}

  /// Keeps `event` for release_all(); drops it here once closed.
  void release_later(event_ptr event) noexcept;
  /// How many events are kept; read without the lock.
  std::size_t waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }
  /// Drops the events kept so far.
  void release_all() noexcept;
  /// Drops the events kept, and from now on each one release_later() is given.
  void close() noexcept;

 private:
  std::mutex mutex_;
  std::function<void()> wake_;     // guarded by mutex_; empty once closed
  std::vector<event_ptr> events_;  // guarded by mutex_
  std::atomic<std::size_t> waiting_{0};
};

}  // namespace troupe::detail
