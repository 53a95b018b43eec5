#pragma once

#include <exception>
#include <type_traits>
#include <utility>

#include "troupe/async/detail/future_base.hpp"
#include "troupe/async/detail/then.hpp"
#include "troupe/async/executor.hpp"
#include "troupe/async/future_access.hpp"
#include "troupe/async/future_traits.hpp"
#include "troupe/async/shared_future.hpp"
#include "troupe/async/shared_state.hpp"

namespace troupe {

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
  shared_future<T> share() noexcept { return shared_future<T>{std::move(*this)}; }

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
  using base::require_state;
  using base::state_;
  using typename base::state_ptr;

  explicit future(state_ptr s) noexcept : base(std::move(s)) {}

  /// How then() calls its continuation: with the ready future, or with the value.
  template <class F>
  struct continuation_call {
    static constexpr bool takes_future = detail::takes_future_v<T, F>;
    template <class Fn>
    static decltype(auto) call(Fn& fn, state_ptr& src) {
      if constexpr (takes_future) {
        return fn(future<T>{std::move(src)});
      } else if constexpr (std::is_void_v<T>) {
        return fn();
      } else {
        return fn(std::move(src->value()));
      }
    }
  };

  template <class F>
  auto then_impl(detail::intrusive_ptr<executor> ex, F&& f) {
    static_assert(detail::takes_future_v<T, F> || detail::takes_value_v<T, F>,
                  "future<T>::then: the continuation must be callable with future<T>, or with "
                  "T (with nothing for future<void>)");
    using R = typename detail::then_result<T, F>::type;
    return detail::attach_then<R, continuation_call<F>>(std::move(state_), std::move(ex),
                                                        std::forward<F>(f));
  }
};

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

/// A future that is ready with the error `e` (an exception object).
template <class T, class E>
future<T> make_exceptional_future(E&& e) {
  return make_exceptional_future<T>(std::make_exception_ptr(std::forward<E>(e)));
}

}  // namespace troupe
