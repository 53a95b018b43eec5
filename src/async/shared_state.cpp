#include "troupe/async/shared_state.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "troupe/async/detail/blocking_handler.hpp"

namespace troupe::detail {

blocking_handler*& this_thread_blocking_handler() noexcept {
  thread_local blocking_handler* handler = nullptr;
  return handler;
}

namespace {

/// Runs `c`, then releases the work it held: what it wakes is scheduled by then.
void run_holding_work(continuation& c) noexcept {
  auto held = std::move(c.work);
  c.run();
}

}  // namespace

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
  run_holding_work(*this);
  if (depth == 1) {
    while (deferred_head != nullptr) {
      auto* c = deferred_head;
      deferred_head = c->next;
      if (deferred_head == nullptr) deferred_tail = nullptr;
      run_holding_work(*c);
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

/// How long a thread spins before it sleeps (a worker: before it hands its place on). Results
/// that arrive within microseconds (a short device command, a request to an actor on another
/// worker) then cost no wake-up.
constexpr auto spin_time = std::chrono::microseconds{50};

/// Spins until `state` is ready, `until` passes, or `go_on()` turns false after `until`.
template <class GoOn>
bool spin_until(const state_base& state, std::chrono::steady_clock::time_point until, GoOn go_on) {
  while (std::chrono::steady_clock::now() < until || go_on()) {
    if (state.is_ready()) return true;
    std::this_thread::yield();
  }
  return state.is_ready();
}

/// Ends a blocking section however the wait ends.
class blocking_section {
 public:
  explicit blocking_section(blocking_handler* handler) : handler_(handler) {
    if (handler_ != nullptr) handler_->begin_blocking();
  }
  blocking_section(const blocking_section&) = delete;
  blocking_section& operator=(const blocking_section&) = delete;
  ~blocking_section() {
    if (handler_ != nullptr) handler_->end_blocking();
  }

 private:
  blocking_handler* handler_;
};

/// Blocks until `state` is ready (or the deadline passes, if `timed`). A worker hands its place
/// on first (which may throw): no other job ever runs on this stack, so none can be stuck below
/// a job that waits for it.
bool wait_with(state_base& state, std::chrono::steady_clock::time_point deadline, bool timed) {
  blocking_section blocking{this_thread_blocking_handler()};
  auto* node = new waiter;
  state.attach_waiter(node);
  bool ready = true;
  if (timed) {
    ready = node->wait_until(deadline);
  } else {
    node->wait();
  }
  node->release_one();
  return ready;
}

}  // namespace

void state_base::wait() const {
  if (is_ready()) return;
  if (origin_) origin_->awaited();
  const auto* handler = this_thread_blocking_handler();
  if (handler == nullptr) {
    // Outside the scheduler, spin on while the executor expects work: a device command about to
    // end then costs no wake-up.
    auto expected = [this] { return executor_ && executor_->expects_work(); };
    if (spin_until(*this, std::chrono::steady_clock::now() + spin_time, expected)) return;
  } else if (!handler->hand_off_at_once()) {
    if (spin_until(*this, std::chrono::steady_clock::now() + spin_time, [] { return false; }))
      return;
  }
  wait_with(const_cast<state_base&>(*this), {}, false);
}

bool state_base::wait_until(std::chrono::steady_clock::time_point deadline) const {
  if (is_ready()) return true;
  if (origin_) origin_->awaited();
  const auto* handler = this_thread_blocking_handler();
  if (handler != nullptr && !handler->hand_off_at_once()) {
    auto until = std::min(deadline, std::chrono::steady_clock::now() + spin_time);
    if (spin_until(*this, until, [] { return false; })) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
  return wait_with(const_cast<state_base&>(*this), deadline, true);
}

}  // namespace troupe::detail
