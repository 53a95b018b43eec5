#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "troupe/async/error.hpp"
#include "troupe/async/executor.hpp"
#include "troupe/async/work_guard.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

/// The value type a `future<void>` stores.
struct unit {};

template <class T>
using stored_t = std::conditional_t<std::is_void_v<T>, unit, T>;

/// A callback that a shared state fires exactly once, when it becomes ready. It is a job so that
/// firing it on an executor costs no extra allocation.
class continuation : public job {
 public:
  continuation* next = nullptr;

  /// Runs inline, or hands itself to `target` when one is set. `this` may be gone afterwards.
  void fire() noexcept {
    if (target) {
      auto ex = std::move(target);
      // Released once the job is queued, where the executor sees it: never a moment between.
      auto held = std::move(work);
      ex->schedule(this);
    } else {
      run_inline();
    }
  }

  intrusive_ptr<executor> target;

  /// Work in flight while this waits (see state_base::attach); released once it has run, or,
  /// with a target, once it is scheduled there.
  work_guard work;

 private:
  /// Runs now, unless this thread is already deep in inline continuations (a long then-chain
  /// completing at once): then it runs after the outermost one, so the stack stays bounded.
  void run_inline() noexcept;
};

/// A continuation that runs a callable once and deletes itself.
template <class F>
class callable_continuation final : public continuation {
 public:
  explicit callable_continuation(F f) : body_(std::move(f)) {}
  void run() noexcept override {
    body_();
    delete this;
  }

 private:
  F body_;
};

template <class F>
continuation* make_continuation(intrusive_ptr<executor> target, F&& f) {
  auto* c = new callable_continuation<std::decay_t<F>>(std::forward<F>(f));
  c->target = std::move(target);
  return c;
}

/// What produces a state's result, where a consumer can use that (see state_base::origin).
class state_origin : public ref_counted {
 public:
  /// Called when someone starts to wait for the state (a continuation, a blocking wait) before
  /// it is ready. A producer that learns of its end only on demand (a device command issued
  /// without an event of its own) arranges to learn of it now.
  virtual void awaited() noexcept {}
};

/// The part of a future's shared state that does not depend on the value type: readiness, the
/// error, the continuations (a lock-free stack), and the executor continuations default to.
class state_base : public ref_counted {
 public:
  explicit state_base(intrusive_ptr<executor> ex = {}) noexcept : executor_(std::move(ex)) {}
  ~state_base() override;

  bool is_ready() const noexcept { return head_.load(std::memory_order_acquire) == ready_tag(); }

  /// Valid once ready.
  bool has_error() const noexcept { return error_ != nullptr; }
  const std::exception_ptr& error() const noexcept { return error_; }

  /// The executor continuations of this state run on unless told otherwise (may be null).
  const intrusive_ptr<executor>& default_executor() const noexcept { return executor_; }

  /// What produces this state's result, when a consumer can wait for that more cheaply than for
  /// the state: the device layer sets the command here, so that a later command on the same
  /// device waits on the device instead of on the host. Set before the future is handed out.
  const intrusive_ptr<state_origin>& origin() const noexcept { return origin_; }
  void set_origin(intrusive_ptr<state_origin> what) noexcept { origin_ = std::move(what); }

  /// Whether a promise settles this state, directly or through the states it waits for (then,
  /// when_all): whoever holds it may settle it at any time, so a continuation waiting here is
  /// work in flight. A state that an actor's response settles is not: if that actor can never
  /// run again, neither can the continuation.
  bool settled_by_promise() const noexcept { return settled_by_promise_; }
  /// Marks the state as settled by a promise. Set before the future is handed out.
  void set_settled_by_promise() noexcept { settled_by_promise_ = true; }

  /// Fires `c` when this state becomes ready; at once if it already is. While `c` waits for a
  /// promise, it counts as work in flight on the executor it will run on (its target, else the
  /// scheduler of the worker that attaches it): the actor system's shutdown waits for it.
  void attach(continuation* c) noexcept {
    if (!is_ready()) {
      if (origin_) origin_->awaited();
      if (settled_by_promise_) {
        executor* runs_on = c->target ? c->target.get() : this_thread_executor();
        if (runs_on != nullptr) c->work = work_guard{*runs_on};
      }
    }
    if (!try_push(c)) c->fire();
  }

  /// Like attach, for a blocking wait's wake-up, which is no work in flight: the waiting thread
  /// counts as busy already, and one that stops waiting (its deadline passed) leaves none.
  void attach_waiter(continuation* c) noexcept {
    if (origin_ && !is_ready()) origin_->awaited();
    if (!try_push(c)) c->fire();
  }

  /// Blocks until ready. On a scheduler worker, a spare worker takes this one's place while it
  /// blocks (see blocking_handler); throws troupe::error if none may.
  void wait() const;

  /// Like wait(); returns false if the deadline passed first.
  bool wait_until(std::chrono::steady_clock::time_point deadline) const;

  /// Claims the right to satisfy this state; only the first caller gets true.
  bool try_claim() noexcept { return !claimed_.exchange(true, std::memory_order_acq_rel); }

  /// Fails the state; false if it was satisfied already.
  bool try_set_error(std::exception_ptr e) noexcept {
    if (!try_claim()) return false;
    fail_claimed(std::move(e));
    return true;
  }

  void set_error(std::exception_ptr e) {
    if (!try_set_error(std::move(e)))
      throw troupe::error(errc::promise_already_satisfied,
                          "promise: set_exception on a promise that was already satisfied");
  }

 protected:
  /// Completes a claimed state with an error.
  void fail_claimed(std::exception_ptr e) noexcept {
    error_ = std::move(e);
    mark_ready();
  }

  /// Publishes the stored result and fires the continuations, oldest first.
  void mark_ready() noexcept;

 private:
  static continuation* ready_tag() noexcept {
    return reinterpret_cast<continuation*>(std::uintptr_t{1});
  }
  bool try_push(continuation* c) noexcept;

  mutable std::atomic<continuation*> head_{nullptr};
  std::atomic<bool> claimed_{false};
  bool settled_by_promise_ = false;
  std::exception_ptr error_;
  intrusive_ptr<executor> executor_;
  intrusive_ptr<state_origin> origin_;
};

/// The shared state of a `future<T>`: a `state_base` plus the value.
template <class T>
class shared_state final : public state_base {
 public:
  using state_base::state_base;

  template <class... Args>
  bool try_set_value(Args&&... args) {
    if (!try_claim()) return false;
    try {
      value_.emplace(std::forward<Args>(args)...);
    } catch (...) {
      // The claim is ours, so the state must still become ready: with the constructor's error.
      fail_claimed(std::current_exception());
      return true;
    }
    mark_ready();
    return true;
  }

  template <class... Args>
  void set_value(Args&&... args) {
    if (!try_set_value(std::forward<Args>(args)...))
      throw troupe::error(errc::promise_already_satisfied,
                          "promise: set_value on a promise that was already satisfied");
  }

  /// Valid once ready without error.
  stored_t<T>& value() noexcept { return *value_; }

 private:
  std::optional<stored_t<T>> value_;
};

}  // namespace troupe::detail
