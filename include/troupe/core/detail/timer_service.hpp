#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

/// Deadlines for request timeouts: one thread and a heap. Each entry can be cancelled (a request
/// that got its response cancels its timeout), and `active()` counts entries that will still
/// fire, so shutdown knows whether a timeout can still wake an actor.
class timer_service {
 public:
  using clock = std::chrono::steady_clock;

  class entry : public ref_counted {
   public:
    explicit entry(std::function<void()> fn) : action(std::move(fn)) {}
    std::function<void()> action;
    std::atomic<bool> done{false};
  };
  using handle = intrusive_ptr<entry>;

  timer_service();
  ~timer_service();

  /// Runs `action` on the timer thread at `deadline`, unless cancelled first. Runs it at once
  /// (on the caller's thread) if the service has stopped.
  handle schedule(clock::time_point deadline, std::function<void()> action);

  /// Prevents the entry from firing; no-op if it fired or was cancelled already.
  void cancel(const handle& h) noexcept;

  std::size_t active() const noexcept { return active_.load(std::memory_order_acquire); }

  void stop();

 private:
  struct slot {
    clock::time_point deadline;
    std::uint64_t sequence;
    handle target;
    bool operator>(const slot& other) const {
      return deadline != other.deadline ? deadline > other.deadline : sequence > other.sequence;
    }
  };

  void loop();

  std::mutex mutex_;
  std::condition_variable condition_;
  std::priority_queue<slot, std::vector<slot>, std::greater<>> heap_;
  std::uint64_t sequence_ = 0;
  std::atomic<std::size_t> active_{0};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace troupe::detail
