#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
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
class scheduler final : public executor {
 public:
  scheduler(std::size_t threads, std::size_t spin_rounds = 64);
  ~scheduler() override;

  void schedule(job* j) override;

  /// Puts `j` in a worker's inbox rather than the local deque, whose owner would pop it next:
  /// for actors that used up their throughput (so others get a turn) and for other threads.
  void schedule_fair(job* j);

  /// Starts the workers.
  void start();

  /// Runs what is queued, then stops and joins the workers. Later jobs run inline.
  void stop();

  std::size_t num_workers() const noexcept { return workers_.size(); }

  /// True if every worker is parked and no job is queued anywhere.
  bool idle() const;

 public:
  class worker;

 private:
  bool has_work() const;
  void wake_one();

  std::vector<std::unique_ptr<worker>> workers_;
  std::size_t spin_rounds_;

  std::mutex sleep_mutex_;
  std::vector<worker*> sleepers_;
  std::atomic<std::size_t> num_sleepers_{0};
  std::atomic<std::size_t> searching_{0};
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace troupe::detail
