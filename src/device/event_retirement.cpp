#include "device/event_retirement.hpp"

#include <utility>

namespace troupe::detail {

void event_retirement::release_later(event_ptr event) noexcept {
  std::lock_guard guard{mutex_};
  if (!wake_) return;  // closed: `event` is dropped on return
  try {
    events_.push_back(std::move(event));
  } catch (...) {
    return;  // no memory to keep it: dropped here, as without this class
  }
  waiting_.store(events_.size(), std::memory_order_relaxed);
  // Under the lock, so that close() waits for it: the thread's owner is gone after close().
  if (events_.size() == 1) wake_();
}

void event_retirement::release_all() noexcept {
  std::vector<event_ptr> dropped;
  std::lock_guard guard{mutex_};
  dropped.swap(events_);
  waiting_.store(0, std::memory_order_relaxed);
}

void event_retirement::close() noexcept {
  std::vector<event_ptr> dropped;
  std::lock_guard guard{mutex_};
  wake_ = nullptr;
  dropped.swap(events_);
  waiting_.store(0, std::memory_order_relaxed);
}

}  // namespace troupe::detail
