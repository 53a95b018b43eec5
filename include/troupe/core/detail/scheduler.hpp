#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "troupe/async/executor.hpp"
#include "troupe/core/detail/work_stealing_deque.hpp"

namespace troupe::detail {

/// The actor system's work-stealing scheduler. Each worker owns a Chase-Lev deque: jobs that a
/// worker creates (a message that wakes an actor, a spawn, a continuation) go to its own deque
/// and run next on the same core; idle workers steal the oldest jobs of others. Jobs from other
/// threads go round robin to the workers' inboxes (lock-free stacks), each taken whole. Idle
/// workers search (spin and steal) briefly, then park. A push wakes a parked worker only when no
/// worker is searching and there is work another worker could take, so a ping-pong between two
/// actors stays on one core and a thread that sends many messages pays for few wake-ups. Measured
/// against CAF's scheduler in bench/ (bench-savina).
///
/// While work is expected (expect_work_until: the device layer's completion thread polls a
/// command that will end in a response), one worker stands by: instead of parking, it watches
/// for jobs sent from other threads, so the response runs at once. Waking a parked worker took 40
/// to 80 us on an H200 host, 5 to 10 % of an iterated 1000x1000 multiply (bench-kernel's
/// matmul_iterated).
class scheduler final : public executor {
 public:
  /// Times a worker that runs out of work looks for more, yielding between, before it parks.
  static constexpr std::size_t default_spin_rounds = 64;

  /// `standby`: whether a worker stands by when work is expected; it costs one core's time then.
  scheduler(std::size_t threads, std::size_t spin_rounds = default_spin_rounds,
            bool standby = false);
  ~scheduler() override;

  void schedule(job* j) override;
  void expect_work_until(std::chrono::steady_clock::time_point until) noexcept override;
  bool expects_work() const noexcept override;

  /// Puts `j` in a worker's inbox rather than the local deque, whose owner would pop it next:
  /// for actors that used up their throughput (so others get a turn) and for other threads.
  void schedule_fair(job* j);

  /// Starts the workers.
  void start();

  /// Runs what is queued, then stops and joins the workers. Later jobs run inline.
  void stop();

  std::size_t num_workers() const noexcept { return workers_.size(); }

  /// True if every worker is parked (or stands by) and no job is queued anywhere.
  bool idle() const;

  /// Whether a worker stands by now (for tests).
  bool standing_by() const noexcept {
    return standby_.load(std::memory_order_seq_cst) == standby_state::held;
  }

 public:
  class worker;

 private:
  /// Whether anybody stands by: nobody, a worker is asked to, or one does.
  enum standby_state : int { none, wanted, held };

  bool has_work() const;
  void wake_one();
  /// Unparks the worker that parked last, if any.
  void wake_sleeper();
  /// A worker that found nothing to do: true if it is to stand by now.
  bool claim_standby() noexcept;
  /// Whether a worker about to park should stand by instead; drops a request whose time passed.
  bool standby_wanted() noexcept;
  /// A request for a standby whose time passed goes: nobody is asked any more.
  void drop_stale_request() noexcept;

  std::vector<std::unique_ptr<worker>> workers_;
  std::size_t spin_rounds_;

  std::mutex sleep_mutex_;
  std::vector<worker*> sleepers_;
  std::atomic<std::size_t> num_sleepers_{0};
  std::atomic<std::size_t> searching_{0};
  bool standby_enabled_;
  std::atomic<int> standby_{standby_state::none};
  std::atomic<std::int64_t> work_expected_until_{0};  ///< steady_clock ticks
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace troupe::detail
