#include "troupe/core/detail/timer_service.hpp"

#include "troupe/support/thread_name.hpp"

namespace troupe::detail {

timer_service::timer_service() : thread_([this] { loop(); }) {
  name_thread(thread_, "troupe-timer");
}

timer_service::~timer_service() {
  stop();
}

timer_service::handle timer_service::schedule(clock::time_point deadline,
                                              std::function<void()> action) {
  auto h = make_counted<entry>(std::move(action));
  {
    std::lock_guard guard{mutex_};
    if (!stopping_) {
      active_.fetch_add(1, std::memory_order_acq_rel);
      heap_.push({deadline, sequence_++, h});
      condition_.notify_one();
      return h;
    }
  }
  h->done.store(true);
  h->action();
  return h;
}

void timer_service::cancel(const handle& h) noexcept {
  if (h && !h->done.exchange(true, std::memory_order_acq_rel))
    active_.fetch_sub(1, std::memory_order_acq_rel);
}

void timer_service::stop() {
  {
    std::lock_guard guard{mutex_};
    if (stopping_) return;
    stopping_ = true;
  }
  condition_.notify_one();
  if (thread_.joinable()) thread_.join();
  // Whatever is still pending fires now rather than never: a timeout is never lost.
  while (!heap_.empty()) {
    auto target = heap_.top().target;
    heap_.pop();
    if (!target->done.exchange(true)) {
      active_.fetch_sub(1, std::memory_order_acq_rel);
      target->action();
    }
  }
}

void timer_service::loop() {
  std::unique_lock lock{mutex_};
  while (!stopping_) {
    if (heap_.empty()) {
      condition_.wait(lock);
      continue;
    }
    auto deadline = heap_.top().deadline;
    if (clock::now() < deadline) {
      condition_.wait_until(lock, deadline);
      continue;
    }
    auto target = heap_.top().target;
    heap_.pop();
    if (target->done.exchange(true, std::memory_order_acq_rel)) continue;  // cancelled
    lock.unlock();
    target->action();
    active_.fetch_sub(1, std::memory_order_acq_rel);
    lock.lock();
  }
}

}  // namespace troupe::detail
