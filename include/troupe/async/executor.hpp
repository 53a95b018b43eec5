#pragma once

#include <chrono>
#include <utility>

#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {

/// A unit of work that an executor runs once. What happens to the object after `run` (deletion,
/// reuse, rescheduling) is the job's own business, so actors can be jobs without allocation.
class job {
 public:
  virtual ~job() = default;
  virtual void run() noexcept = 0;

  /// Link for an executor's lock-free queues; a job waits in at most one queue at a time.
  job* next_job = nullptr;
};

/// Something that runs jobs: the actor system's scheduler, or a user's pool.
/// Shared by reference count, so futures can keep the executor of their continuations alive.
class executor : public detail::ref_counted {
 public:
  /// Takes ownership of `j` and runs it eventually. An executor that has stopped runs it inline,
  /// so no continuation is ever lost.
  virtual void schedule(job* j) = 0;

  /// A hint that work is likely to come before `until`: a device command is about to end. An
  /// executor whose idle threads sleep may keep one of them awake and searching until then, so
  /// that the work starts without a wake-up's delay. Cheap enough to call on every poll; the
  /// default ignores it.
  virtual void expect_work_until(std::chrono::steady_clock::time_point until) noexcept {
    (void)until;
  }

  /// Whether work is expected now (see expect_work_until): a thread that waits for a future of
  /// this executor spins meanwhile instead of sleeping.
  virtual bool expects_work() const noexcept { return false; }

  /// Counts work in flight that will schedule jobs here later: a continuation that waits for a
  /// promise, a device command. An executor that must know when nothing can give it work any
  /// more (the actor system's, at shutdown) waits for all of it. Paired with work_finished;
  /// use a work_guard rather than calling them. The default ignores them.
  virtual void work_started() noexcept {}

  /// Ends what one work_started began, after the jobs it schedules are scheduled.
  virtual void work_finished() noexcept {}

  /// Runs `f()` on this executor.
  template <class F>
  void post(F&& f) {
    schedule(new function_job<std::decay_t<F>>(std::forward<F>(f)));
  }

 private:
  template <class F>
  struct function_job final : job {
    explicit function_job(F f) : fn(std::move(f)) {}
    void run() noexcept override {
      fn();
      delete this;
    }
    F fn;
  };
};

/// Tag for `then`: run the continuation on the thread that completes the future.
struct inline_execution_t {
  explicit constexpr inline_execution_t() = default;
};
inline constexpr inline_execution_t inline_execution{};

namespace detail {

/// The current thread's default executor (null outside scheduler workers). Inline: every
/// continuation attached to a promise's future asks, on the hot path of a then-chain.
inline executor*& this_thread_executor() noexcept {
  static thread_local executor* current = nullptr;
  return current;
}

}  // namespace detail

}  // namespace troupe
