#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
/// A worker that blocks in future::get() hands its place to a spare worker first (compensation,
/// as in Java's ForkJoinPool and Go's scheduler): a retired spare is woken, or a new one started,
/// so that `threads` workers stay unblocked; no job ever runs on a blocked worker's stack. When
/// the blocked worker resumes, one worker too many runs; the next one to look for work retires
/// and parks as a spare. The spares are limited; past the limit, get() on a worker throws.
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

  /// Spare workers that may stand in for blocked ones at once, unless configured otherwise.
  static constexpr std::size_t default_spare_threads = 256;

  /// `standby`: whether a worker stands by when work is expected; it costs one core's time then.
  /// `spare_threads`: how many workers may be blocked in get() at once, each replaced by a spare.
  scheduler(std::size_t threads, std::size_t spin_rounds = default_spin_rounds,
            bool standby = false, std::size_t spare_threads = default_spare_threads);
  ~scheduler() override;

  void schedule(job* j) override;
  void expect_work_until(std::chrono::steady_clock::time_point until) noexcept override;
  bool expects_work() const noexcept override;
  void work_started() noexcept override;
  void work_finished() noexcept override;

  /// Puts `j` in a worker's inbox rather than the local deque, whose owner would pop it next:
  /// for actors that used up their throughput (so others get a turn) and for other threads.
  void schedule_fair(job* j);

  /// Starts the workers.
  void start();

  /// Runs what is queued, then stops and joins the workers. Later jobs run inline.
  void stop();

  /// The configured worker count (spares not included).
  std::size_t num_workers() const noexcept { return threads_; }

  /// How many workers may be blocked in get() at once.
  std::size_t spare_threads() const noexcept { return workers_.size() - threads_; }

  /// Worker threads started so far, spares included (for tests).
  std::size_t started_workers() const noexcept { return started_.load(std::memory_order_acquire); }

  /// True if every worker is parked (or stands by) and no job is queued anywhere.
  bool idle() const;

  /// Whether a worker stands by now (for tests).
  bool standing_by() const noexcept {
    return standby_.load(std::memory_order_seq_cst) == standby_state::held;
  }

  /// Pieces of work in flight (see executor::work_started).
  std::int64_t work_in_flight() const noexcept {
    return work_in_flight_.load(std::memory_order_seq_cst);
  }

  /// If every worker is parked (none runs, searches, stands by or is blocked) and no job is
  /// queued: the number of times a parked worker was woken so far. Two equal results mean
  /// that no worker ran anything in between, so nothing that only a job creates (a timer, work
  /// in flight) can have appeared meanwhile. Empty otherwise.
  std::optional<std::uint64_t> quiet_wakeups() const;

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

  /// `w` is about to block: a spare takes its place. Throws at the spare limit.
  void hand_off(worker& w);
  /// `w` runs again after hand_off: one worker too many runs until one retires.
  void take_back(worker& w) noexcept;
  /// Parks `w` as a spare if more workers run than configured; false (at once) if not.
  bool retire(worker& w);
  /// Makes and starts the worker of the next free slot; under sleep_mutex_.
  void start_spare();
  /// Why worker `index` cannot block: every spare stands in for a blocked worker.
  std::string spare_limit_message(std::size_t index) const;
  /// The workers started so far.
  std::size_t started() const noexcept { return started_.load(std::memory_order_acquire); }

  std::size_t threads_;
  /// Every slot a worker may ever take, made up front: stealers read it while spares start.
  /// Slots [0, started_) hold workers.
  std::vector<std::unique_ptr<worker>> workers_;
  std::atomic<std::size_t> started_{0};
  std::size_t spin_rounds_;

  /// Guards parking, blocking and retiring: sleepers_, spares_, surplus_'s changes, wakeups_,
  /// and the start of spares.
  mutable std::mutex sleep_mutex_;
  std::vector<worker*> sleepers_;
  std::atomic<std::size_t> num_sleepers_{0};
  std::vector<worker*> spares_;  ///< retired spares, parked; not woken for work
  std::uint64_t wakeups_ = 0;    ///< parked workers woken (or spares started) so far
  std::atomic<std::size_t> searching_{0};
  bool standby_enabled_;
  std::atomic<int> standby_{standby_state::none};
  std::atomic<std::int64_t> work_expected_until_{0};  ///< steady_clock ticks
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};
  /// Unblocked, unretired workers minus threads_: above 0, the next to look for work retires.
  /// Read by every worker before each job, so on a cache line of its own, which only blocking
  /// and retiring write.
  alignas(64) std::atomic<std::int64_t> surplus_{0};
  /// Written where continuations wait and fire: kept off the lines above.
  alignas(64) std::atomic<std::int64_t> work_in_flight_{0};
  char padding_[64 - sizeof(std::atomic<std::int64_t>)] = {};
};

}  // namespace troupe::detail
