#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "device/backend.hpp"
#include "device/retirement.hpp"
#include "troupe/device/detail/queue_state.hpp"

namespace troupe::detail {

/// Turns finished device commands into satisfied futures, without ever blocking a scheduler
/// worker. One thread per actor system: it sleeps while nothing is in flight, and otherwise
/// either polls the events (spinning briefly, then backing off) or, in callback mode, waits for
/// the drivers to call back. bench/device/completion measures which is faster. Polling, it tells
/// the executor of the results to expect work while it spins, so that a worker stands by for the
/// responses (scheduler::expect_work_until).
class completion_queue {
 public:
  enum class mode { polling, callback };

  /// `results`: where the finished commands' continuations and responses run; it outlives the
  /// queue.
  completion_queue(mode m, executor& results);
  ~completion_queue();

  /// Watches `event`; calls finish() on it and complete() on `result` when it is done, or
  /// fail() when it failed.
  void watch(event_ptr event, intrusive_ptr<command_result> result);

  /// `queue` has just issued a launch without an event of its own (see queue_state): covers
  /// it cover_delay from now, or once the queue has been quiet that long, unless someone waited
  /// for it first. stop() covers at once.
  void cover_later(intrusive_ptr<queue_state> queue);
  /// Long enough for a pipeline's next stages to follow on the same queue (an empty stage took
  /// 8-15 us on an H200), short enough that memory nobody waits for goes back soon.
  static constexpr std::chrono::microseconds cover_delay{100};

  /// `queue` has a launch ready that its submitter leaves to this thread (queue_state::hand_on):
  /// the thread issues it, so the submitter goes on while the driver takes the launch, and a
  /// queue's launches may come from one thread (NVIDIA's OpenCL charges for a change of
  /// thread). Polling only; wakes the thread if it sleeps. stop() issues what is left.
  void issue_later(intrusive_ptr<queue_state> queue);

  /// Where the device events and queues go whose last reference a thread other than this one
  /// would drop (see retirement): this thread drops them when nothing is in flight and no queue
  /// has launches to cover, or once most_retired wait. stop() drops them at once, and those
  /// given after it are dropped where they are given.
  const intrusive_ptr<detail::retirement>& retirement() const noexcept { return retired_; }
  static constexpr std::size_t most_retired = 256;

  /// Whether the thread sleeps until news comes (for tests, which wait for it to).
  bool sleeps() {
    std::lock_guard guard{mutex_};
    return sleeps_untimed_;
  }

  /// Issues what issue_later() was told of, covers what cover_later() was told of, blocks until
  /// everything watched so far is done, then ends the thread.
  void stop();

  mode completion_mode() const noexcept { return mode_; }

 private:
  struct entry {
    event_ptr event;
    intrusive_ptr<command_result> result;
  };

  struct to_cover {
    intrusive_ptr<queue_state> queue;
    std::chrono::steady_clock::time_point due;
  };

  /// What a driver's callback reaches the queue through. A driver may call back after it has
  /// reported the event complete (PoCL does), by when the queue may have finished the command
  /// on another wake-up and been destroyed: the callback holds this, not the queue.
  struct callback_target {
    std::mutex mutex;
    completion_queue* queue = nullptr;  // null once the queue is gone; guarded by mutex
  };

  /// What a pass of the thread took from the submitters under the lock, to do outside it.
  struct taken {
    std::vector<intrusive_ptr<queue_state>> to_issue;
    std::vector<intrusive_ptr<queue_state>> due;  ///< queues whose cover is due
    bool stopping = false;
  };

  /// The thread: passes over the commands in flight until stop().
  void run();
  /// Drops the events left to the thread (retirement()) when it is quiet (`idle`: nothing in
  /// flight, no news and no cover to come), or once most_retired wait.
  void release_retired(bool idle);
  /// Polling with nothing in flight: spins (yielding) up to 50 us, until news or a cover is due.
  void spin_while_idle() const;
  /// Whether the first cover is due at `now`, seen without the lock.
  bool cover_due(std::chrono::steady_clock::time_point now) const noexcept {
    return now.time_since_epoch().count() >= next_due_.load(std::memory_order_relaxed);
  }
  /// Under the lock: sleeps while there is nothing to do, then moves new commands to `pending`
  /// and takes what to issue and to cover into `work`. False when the thread is to end.
  bool take_news(std::vector<entry>& pending, std::chrono::steady_clock::time_point& last_progress,
                 taken& work);
  /// Waits on wake_ under `lock` until `news()`: without a time limit while no cover is
  /// pending, until the first is due in callback mode, not at all when polling with one pending.
  template <class News>
  void sleep_until_news(std::unique_lock<std::mutex>& lock, News news);
  /// Covers the queues in `due`: at once when `stopping`, else those not busy (cover_when_quiet),
  /// the others again later.
  void cover_queues(std::vector<intrusive_ptr<queue_state>>& due, bool stopping);
  /// Finishes the commands of `pending` that are done, keeping the others in order; true when
  /// any was.
  static bool finish_done(std::vector<entry>& pending);
  /// Polling with commands in flight, between passes: yields while there was progress in the
  /// last 2 ms, else naps, longer the longer none came.
  void pause_between_polls(bool progress, std::chrono::steady_clock::time_point& last_progress);
  /// A driver called back: counts it and wakes the thread.
  void signal();
  /// An event was left to the thread (retirement()): wakes it if it sleeps with nothing to do.
  void wake_for_retired() noexcept;
  /// Takes the queues whose cover is due (all of them once stopping) out of to_cover_; under
  /// mutex_.
  std::vector<intrusive_ptr<queue_state>> take_due(std::chrono::steady_clock::time_point now);
  /// Puts covers back into to_cover_, in order of their due times; under mutex_.
  void cover_at(std::vector<to_cover> later);
  /// Whether watch() or issue_later() brought something, seen without the lock.
  bool has_news() const noexcept {
    return has_incoming_.load(std::memory_order_acquire) ||
           has_to_issue_.load(std::memory_order_acquire);
  }
  /// Finishes `e` if its command is done; true when it was.
  static bool try_finish(entry& e) noexcept;

  mode mode_;
  executor& results_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<entry> incoming_;
  std::atomic<bool> has_incoming_{false};  // lets the idle thread spin without the lock
  std::size_t signalled_ = 0;              // callback mode: driver callbacks not yet handled
  std::deque<to_cover> to_cover_;          // oldest first
  std::vector<intrusive_ptr<queue_state>> to_issue_;
  std::atomic<bool> has_to_issue_{false};  // !to_issue_.empty(), read without the lock
  bool sleeps_untimed_ = false;            // the thread waits for news only, not for a cover
  bool naps_ = false;                      // the thread naps while commands are in flight
  /// to_cover_'s first due time, in steady_clock ticks (max when empty): lets a polling pass
  /// skip the lock.
  std::atomic<std::chrono::steady_clock::rep> next_due_{
      std::chrono::steady_clock::time_point::max().time_since_epoch().count()};
  bool stopping_ = false;
  intrusive_ptr<detail::retirement> retired_{new detail::retirement([this] { wake_for_retired(); }),
                                             adopt_ref};
  std::shared_ptr<callback_target> callbacks_;
  std::thread thread_;
};

}  // namespace troupe::detail
