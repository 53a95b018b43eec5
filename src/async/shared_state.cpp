#include "troupe/async/shared_state.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace troupe::detail {

wait_helper*& this_thread_wait_helper() noexcept {
  thread_local wait_helper* helper = nullptr;
  return helper;
}

executor*& this_thread_executor() noexcept {
  thread_local executor* current = nullptr;
  return current;
}

void continuation::run_inline() noexcept {
  constexpr int max_depth = 64;
  thread_local int depth = 0;
  thread_local continuation* deferred_head = nullptr;
  thread_local continuation* deferred_tail = nullptr;
  if (depth >= max_depth) {
    next = nullptr;
    (deferred_tail != nullptr ? deferred_tail->next : deferred_head) = this;
    deferred_tail = this;
    return;
  }
  ++depth;
  run();
  if (depth == 1) {
    while (deferred_head != nullptr) {
      auto* c = deferred_head;
      deferred_head = c->next;
      if (deferred_head == nullptr) deferred_tail = nullptr;
      c->run();
    }
  }
  --depth;
}

state_base::~state_base() = default;

bool state_base::try_push(continuation* c) noexcept {
  auto* head = head_.load(std::memory_order_acquire);
  do {
    if (head == ready_tag()) return false;
    c->next = head;
  } while (
      !head_.compare_exchange_weak(head, c, std::memory_order_acq_rel, std::memory_order_acquire));
  return true;
}

void state_base::mark_ready() noexcept {
  auto* list = head_.exchange(ready_tag(), std::memory_order_acq_rel);
  // The stack holds the newest first; fire the oldest first.
  continuation* reversed = nullptr;
  while (list != nullptr) {
    auto* next = list->next;
    list->next = reversed;
    reversed = list;
    list = next;
  }
  while (reversed != nullptr) {
    auto* next = reversed->next;  // read first: firing may free the node
    reversed->fire();
    reversed = next;
  }
}

namespace {

/// Wakes a waiting thread. Shared by the waiter and the state's list (two references), because
/// a timed-out waiter leaves while the node is still attached.
class waiter final : public continuation {
 public:
  void run() noexcept override {
    {
      std::lock_guard guard{mutex_};
      done_ = true;
    }
    condition_.notify_one();
    release_one();
  }

  bool done() {
    std::lock_guard guard{mutex_};
    return done_;
  }

  /// Waits until done or the deadline; returns done.
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock{mutex_};
    return condition_.wait_until(lock, deadline, [this] { return done_; });
  }

  void wait() {
    std::unique_lock lock{mutex_};
    condition_.wait(lock, [this] { return done_; });
  }

  void release_one() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  std::mutex mutex_;
  std::condition_variable condition_;
  bool done_ = false;
  std::atomic<int> refs_{2};
};

/// Nesting limit for helping: each nested wait runs jobs on the same stack.
constexpr int max_help_depth = 64;
thread_local int help_depth = 0;

bool wait_with(state_base& state, std::chrono::steady_clock::time_point deadline, bool timed) {
  auto* node = new waiter;
  state.attach(node);
  auto* helper = this_thread_wait_helper();
  bool ready = false;
  if (helper != nullptr && help_depth < max_help_depth) {
    // A worker must not sleep while the job it waits for sits in a queue: run jobs, and sleep
    // only briefly between polls (growing from 20us to 1ms) when there are none.
    ++help_depth;
    auto pause = std::chrono::microseconds{20};
    for (;;) {
      if (node->done()) {
        ready = true;
        break;
      }
      if (timed && std::chrono::steady_clock::now() >= deadline) break;
      if (helper->try_run_one()) {
        pause = std::chrono::microseconds{20};
        continue;
      }
      auto until = std::chrono::steady_clock::now() + pause;
      if (timed && until > deadline) until = deadline;
      if (node->wait_until(until)) {
        ready = true;
        break;
      }
      pause = std::min(pause * 2, std::chrono::microseconds{1000});
    }
    --help_depth;
  } else if (timed) {
    ready = node->wait_until(deadline);
  } else {
    node->wait();
    ready = true;
  }
  node->release_one();
  return ready;
}

}  // namespace

void state_base::wait() const {
  if (is_ready()) return;
  if (origin_) origin_->awaited();
  if (this_thread_wait_helper() == nullptr) {
    // A thread outside the scheduler spins briefly before it sleeps, and on while its executor
    // expects work: results that arrive within microseconds (a short device command, a local
    // request) or from a device command about to end then cost no wake-up.
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds{50};
    while (std::chrono::steady_clock::now() < until || (executor_ && executor_->expects_work())) {
      if (is_ready()) return;
      std::this_thread::yield();
    }
  }
  wait_with(const_cast<state_base&>(*this), {}, false);
}

bool state_base::wait_until(std::chrono::steady_clock::time_point deadline) const {
  if (is_ready()) return true;
  if (origin_) origin_->awaited();
  return wait_with(const_cast<state_base&>(*this), deadline, true);
}

}  // namespace troupe::detail
