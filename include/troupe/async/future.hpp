#pragma once

#include <chrono>
#include <exception>
#include <future>
#include <type_traits>
#include <utility>

#include "troupe/async/shared_state.hpp"

namespace troupe {

template <class T>
class future;
template <class T>
class shared_future;

namespace detail {

template <class T>
struct is_future : std::false_type {};
template <class T>
struct is_future<future<T>> : std::true_type {};
template <class T>
struct is_future<shared_future<T>> : std::true_type {};
template <class T>
inline constexpr bool is_future_v = is_future<std::decay_t<T>>::value;

/// future<future<U>> and future<shared_future<U>> collapse to future<U>.
template <class R>
struct unwrapped {
  using type = R;
};
template <class U>
struct unwrapped<future<U>> {
  using type = U;
};
template <class U>
struct unwrapped<shared_future<U>> {
  using type = U;
};

/// Gives the async layer access to the shared state behind a future.
struct future_access {
  template <class Future>
  static auto& state(Future& f) noexcept {
    return f.state_;
  }
  template <class Future, class State>
  static Future make(State s) {
    return Future{std::move(s)};
  }
};

/// The executor a continuation runs on when none is named: the source state's, else the current
/// worker's scheduler, else none (inline).
inline intrusive_ptr<executor> default_continuation_executor(const state_base& src) {
  if (src.default_executor()) return src.default_executor();
  return intrusive_ptr<executor>{this_thread_executor()};
}

/// Moves (or, from a shared source, copies) the result of a ready state into `out`.
template <class T, class Source>
void forward_result(Source& src, shared_state<T>& out) noexcept {
  if (src.has_error()) {
    out.try_set_error(src.error());
  } else if constexpr (std::is_void_v<T>) {
    out.try_set_value();
  } else {
    out.try_set_value(src.value());
  }
}

/// Completes `out` with the result of calling `body()`, unwrapping a returned future.
template <class U, class Body>
void complete_with(const intrusive_ptr<shared_state<U>>& out, Body&& body) noexcept {
  using R = std::invoke_result_t<Body>;
  try {
    if constexpr (is_future_v<R>) {
      auto inner = body();
      auto& inner_state = future_access::state(inner);
      if (!inner_state) {
        out->try_set_error(std::make_exception_ptr(
            error(errc::no_state, "then: the continuation returned a future with no state")));
        return;
      }
      auto* raw = inner_state.get();
      raw->attach(make_continuation({}, [keep = inner_state, out]() noexcept {
        if constexpr (std::is_same_v<std::decay_t<R>, future<U>>) {
          if (keep->has_error()) {
            out->try_set_error(keep->error());
          } else if constexpr (std::is_void_v<U>) {
            out->try_set_value();
          } else {
            out->try_set_value(std::move(keep->value()));
          }
        } else {
          forward_result(*keep, *out);
        }
      }));
    } else if constexpr (std::is_void_v<R>) {
      body();
      out->try_set_value();
    } else {
      out->try_set_value(body());
    }
  } catch (...) {
    out->try_set_error(std::current_exception());
  }
}

/// What `then(f)` on a future<T> calls f with: the ready future if f takes one, else the value.
template <class T, class F>
constexpr bool takes_future_v = std::is_invocable_v<F, future<T>>;
template <class T, class F>
constexpr bool takes_value_v =
    std::is_void_v<T> ? std::is_invocable_v<F> : std::is_invocable_v<F, stored_t<T>&&>;

template <class T, class F>
struct then_result {
  static auto probe() {
    if constexpr (takes_future_v<T, F>) {
      return std::type_identity<std::invoke_result_t<F, future<T>>>{};
    } else if constexpr (std::is_void_v<T>) {
      return std::type_identity<std::invoke_result_t<F>>{};
    } else {
      return std::type_identity<std::invoke_result_t<F, T&&>>{};
    }
  }
  using type = typename decltype(probe())::type;
};

/// What future and shared_future have in common: the state and the ways to wait for it.
template <class T>
class future_base {
 public:
  // -- properties -----------------------------------------------------------

  /// False when there is no state: default-constructed, moved from, or consumed by get(),
  /// then() or share() (for a future).
  bool valid() const noexcept { return static_cast<bool>(state_); }

  bool is_ready() const noexcept { return state_ && state_->is_ready(); }

  /// True once ready with an error.
  bool has_exception() const noexcept { return is_ready() && state_->has_error(); }

  // -- operations -----------------------------------------------------------

  /// Blocks until ready. On a scheduler worker this runs other jobs meanwhile, so it cannot
  /// deadlock the scheduler.
  void wait() const {
    require_state("future::wait");
    state_->wait();
  }

  template <class Rep, class Period>
  std::future_status wait_for(std::chrono::duration<Rep, Period> timeout) const {
    require_state("future::wait_for");
    return state_->wait_until(std::chrono::steady_clock::now() + timeout)
               ? std::future_status::ready
               : std::future_status::timeout;
  }

 protected:
  using state_ptr = intrusive_ptr<shared_state<T>>;

  future_base() noexcept = default;
  explicit future_base(state_ptr s) noexcept : state_(std::move(s)) {}

  void require_state(const char* operation) const {
    if (!state_)
      throw error(errc::no_state, std::string{operation} +
                                      ": the future has no state (default-constructed, moved "
                                      "from, or consumed by get(), then() or share())");
  }

  /// A continuation's result keeps this future's executor, else takes the one it ran on.
  intrusive_ptr<executor> inherited_executor(const intrusive_ptr<executor>& ex) const {
    return state_->default_executor() ? state_->default_executor() : ex;
  }

  state_ptr state_;
};

}  // namespace detail

/// The result of an asynchronous operation that is retrieved once. Move-only.
template <class T>
class future : public detail::future_base<T> {
 public:
  // -- member types ---------------------------------------------------------

  using value_type = T;

  // -- constructors ---------------------------------------------------------

  future() noexcept = default;
  future(future&&) noexcept = default;
  future& operator=(future&&) noexcept = default;
  future(const future&) = delete;
  future& operator=(const future&) = delete;

  // -- operations -----------------------------------------------------------

  /// Waits, then returns the value or throws the error. Consumes the future.
  T get() {
    require_state("future::get");
    state_->wait();
    auto s = std::move(state_);
    if (s->has_error()) std::rethrow_exception(s->error());
    if constexpr (!std::is_void_v<T>) return std::move(s->value());
  }

  /// Converts into a copyable future. Consumes this one.
  shared_future<T> share() noexcept;

  /// Attaches a continuation; returns the future of its result (a returned future is
  /// unwrapped). `f` takes the ready `future<T>`, or the value (then it is skipped on error and
  /// the error propagates). It runs on the default executor: the state's (the actor system's
  /// scheduler for futures the system made), else the current worker's, else inline.
  template <class F>
  auto then(F&& f) {
    require_state("future::then");
    auto ex = detail::default_continuation_executor(*state_);
    return then_impl(std::move(ex), std::forward<F>(f));
  }

  /// Like then(f), on `ex`.
  template <class F>
  auto then(executor& ex, F&& f) {
    require_state("future::then");
    return then_impl(detail::intrusive_ptr<executor>{&ex}, std::forward<F>(f));
  }

  /// Like then(f), run by the thread that makes this future ready (or by the caller, if ready).
  template <class F>
  auto then(inline_execution_t, F&& f) {
    require_state("future::then");
    return then_impl({}, std::forward<F>(f));
  }

 private:
  friend struct detail::future_access;
  using base = detail::future_base<T>;
  using base::inherited_executor;
  using base::require_state;
  using base::state_;
  using typename base::state_ptr;

  explicit future(state_ptr s) noexcept : base(std::move(s)) {}

  template <class F>
  auto then_impl(detail::intrusive_ptr<executor> ex, F&& f) {
    static_assert(detail::takes_future_v<T, F> || detail::takes_value_v<T, F>,
                  "future<T>::then: the continuation must be callable with future<T>, or with "
                  "T (with nothing for future<void>)");
    using R = typename detail::then_result<T, F>::type;
    using U = typename detail::unwrapped<R>::type;
    auto out = detail::make_counted<detail::shared_state<U>>(inherited_executor(ex));
    auto* src = state_.get();
    src->attach(detail::make_continuation(
        std::move(ex), [src = std::move(state_), out, fn = std::forward<F>(f)]() mutable noexcept {
          if constexpr (detail::takes_future_v<T, F>) {
            detail::complete_with(out, [&] { return fn(future<T>{std::move(src)}); });
          } else if (src->has_error()) {
            out->try_set_error(src->error());
          } else if constexpr (std::is_void_v<T>) {
            detail::complete_with(out, [&] { return fn(); });
          } else {
            detail::complete_with(out, [&] { return fn(std::move(src->value())); });
          }
        }));
    return detail::future_access::make<future<U>>(std::move(out));
  }
};

/// A future whose result can be read many times and by many holders. Copyable.
template <class T>
class shared_future : public detail::future_base<T> {
 public:
  // -- member types ---------------------------------------------------------

  using value_type = T;

  // -- constructors ---------------------------------------------------------

  shared_future() noexcept = default;
  shared_future(future<T>&& f) noexcept : base(std::move(detail::future_access::state(f))) {}

  // -- operations -----------------------------------------------------------

  /// Waits, then returns a reference to the value or throws the error.
  decltype(auto) get() const {
    require_state("future::get");
    state_->wait();
    if (state_->has_error()) std::rethrow_exception(state_->error());
    if constexpr (!std::is_void_v<T>) return static_cast<const T&>(state_->value());
  }

  /// Attaches a continuation that takes this shared_future, or the value by const reference.
  template <class F>
  auto then(F&& f) const {
    require_state("future::then");
    return then_impl(detail::default_continuation_executor(*state_), std::forward<F>(f));
  }
  template <class F>
  auto then(executor& ex, F&& f) const {
    require_state("future::then");
    return then_impl(detail::intrusive_ptr<executor>{&ex}, std::forward<F>(f));
  }
  template <class F>
  auto then(inline_execution_t, F&& f) const {
    require_state("future::then");
    return then_impl({}, std::forward<F>(f));
  }

 private:
  friend struct detail::future_access;
  using base = detail::future_base<T>;
  using base::inherited_executor;
  using base::require_state;
  using base::state_;
  using typename base::state_ptr;

  explicit shared_future(state_ptr s) noexcept : base(std::move(s)) {}

  template <class F>
  auto then_impl(detail::intrusive_ptr<executor> ex, F&& f) const {
    constexpr bool takes_shared = std::is_invocable_v<F, shared_future<T>>;
    constexpr bool takes_value = [] {
      if constexpr (std::is_void_v<T>) {
        return std::is_invocable_v<F>;
      } else {
        return std::is_invocable_v<F, const T&>;
      }
    }();
    static_assert(takes_shared || takes_value,
                  "shared_future<T>::then: the continuation must be callable with "
                  "shared_future<T>, or with const T& (with nothing for void)");
    auto call = [](auto& fn, const state_ptr& src) -> decltype(auto) {
      if constexpr (takes_shared) {
        return fn(shared_future<T>{src});
      } else if constexpr (std::is_void_v<T>) {
        return fn();
      } else {
        return fn(static_cast<const T&>(src->value()));
      }
    };
    using R = decltype(call(f, state_));
    using U = typename detail::unwrapped<R>::type;
    auto out = detail::make_counted<detail::shared_state<U>>(inherited_executor(ex));
    state_->attach(detail::make_continuation(
        std::move(ex), [src = state_, out, fn = std::forward<F>(f), call]() mutable noexcept {
          if (!takes_shared && src->has_error()) {
            out->try_set_error(src->error());
            return;
          }
          detail::complete_with(out, [&] { return call(fn, src); });
        }));
    return detail::future_access::make<future<U>>(std::move(out));
  }
};

template <class T>
shared_future<T> future<T>::share() noexcept {
  return shared_future<T>{std::move(*this)};
}

/// A future that is ready with `value`.
template <class T>
future<std::decay_t<T>> make_ready_future(T&& value) {
  auto s = detail::make_counted<detail::shared_state<std::decay_t<T>>>();
  s->set_value(std::forward<T>(value));
  return detail::future_access::make<future<std::decay_t<T>>>(std::move(s));
}

/// A ready future<void>.
inline future<void> make_ready_future() {
  auto s = detail::make_counted<detail::shared_state<void>>();
  s->set_value();
  return detail::future_access::make<future<void>>(std::move(s));
}

/// A future that is ready with an error.
template <class T>
future<T> make_exceptional_future(std::exception_ptr e) {
  auto s = detail::make_counted<detail::shared_state<T>>();
  s->set_error(std::move(e));
  return detail::future_access::make<future<T>>(std::move(s));
}

template <class T, class E>
future<T> make_exceptional_future(E&& e) {
  return make_exceptional_future<T>(std::make_exception_ptr(std::forward<E>(e)));
}

}  // namespace troupe
