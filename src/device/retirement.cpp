#include "device/retirement.hpp"

#include <utility>

namespace troupe::detail {

void retirement::release_later(event_ptr event) noexcept {
  std::lock_guard guard{mutex_};
  if (!wake_) return;  // closed: `event` is dropped on return
  try {
    events_.push_back(std::move(event));
  } catch (...) {
    return;  // no memory to keep it: dropped here, as without this class
  }
  kept();
}

void retirement::release_later(std::unique_ptr<backend_queue> queue) noexcept {
  std::lock_guard guard{mutex_};
  if (!wake_) return;  // closed: the system has waited for every command, so nothing waits
  try {
    queues_.push_back(std::move(queue));
  } catch (...) {
    return;  // no memory to keep it: dropped here, as without this class
  }
  kept();
}

void retirement::kept() noexcept {
  const std::size_t count = events_.size() + queues_.size();
  waiting_.store(count, std::memory_order_relaxed);
  // Under the lock, so that close() waits for it: the thread's owner is gone after close().
  if (count == 1) wake_();
}

void retirement::release_all() noexcept {
  std::vector<event_ptr> events;
  std::vector<std::unique_ptr<backend_queue>> queues;
  {
    std::lock_guard guard{mutex_};
    events.swap(events_);
    queues.swap(queues_);
    waiting_.store(0, std::memory_order_relaxed);
  }
  // Dropped outside the lock: a queue's destructor calls into the driver.
}

void retirement::close() noexcept {
  std::vector<event_ptr> events;
  std::vector<std::unique_ptr<backend_queue>> queues;
  {
    std::lock_guard guard{mutex_};
    wake_ = nullptr;
    events.swap(events_);
    queues.swap(queues_);
    waiting_.store(0, std::memory_order_relaxed);
  }
}

}  // namespace troupe::detail
