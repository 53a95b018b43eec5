#pragma once

#include <exception>
#include <type_traits>
#include <utility>

#include "troupe/async/detail/future_base.hpp"
#include "troupe/async/detail/then.hpp"
#include "troupe/async/executor.hpp"
#include "troupe/async/future_access.hpp"
#include "troupe/async/future_traits.hpp"

namespace troupe {

/// A future whose result can be read many times and by many holders. Copyable. Made from a
/// future (future::share), and its then() returns one: future.hpp, which includes this header,
/// gives both.
template <class T>
class shared_future : public detail::future_base<T> {
 public:
  // -- member types ---------------------------------------------------------

  using value_type = T;

  // -- constructors ---------------------------------------------------------

  shared_future() noexcept = default;
  /// Takes over the state of `f`.
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
  /// Like then(f), on `ex`.
  template <class F>
  auto then(executor& ex, F&& f) const {
    require_state("future::then");
    return then_impl(detail::intrusive_ptr<executor>{&ex}, std::forward<F>(f));
  }
  /// Like then(f), run by the thread that makes this future ready (or by the caller, if ready).
  template <class F>
  auto then(inline_execution_t, F&& f) const {
    require_state("future::then");
    return then_impl({}, std::forward<F>(f));
  }

 private:
  friend struct detail::future_access;
  using base = detail::future_base<T>;
  using base::require_state;
  using base::state_;
  using typename base::state_ptr;

  explicit shared_future(state_ptr s) noexcept : base(std::move(s)) {}

  /// How then() calls its continuation: with a copy of this shared_future, or with the value
  /// by const reference.
  template <class F>
  struct continuation_call {
    static constexpr bool takes_future = std::is_invocable_v<F, shared_future<T>>;
    static constexpr bool takes_value = [] {
      if constexpr (std::is_void_v<T>) {
        return std::is_invocable_v<F>;
      } else {
        return std::is_invocable_v<F, const T&>;
      }
    }();
    template <class Fn>
    static decltype(auto) call(Fn& fn, const state_ptr& src) {
      if constexpr (takes_future) {
        return fn(shared_future<T>{src});
      } else if constexpr (std::is_void_v<T>) {
        return fn();
      } else {
        return fn(static_cast<const T&>(src->value()));
      }
    }
  };

  template <class F>
  auto then_impl(detail::intrusive_ptr<executor> ex, F&& f) const {
    using call = continuation_call<F>;
    static_assert(call::takes_future || call::takes_value,
                  "shared_future<T>::then: the continuation must be callable with "
                  "shared_future<T>, or with const T& (with nothing for void)");
    using R = decltype(call::call(f, state_));
    return detail::attach_then<R, call>(state_ptr{state_}, std::move(ex), std::forward<F>(f));
  }
};

}  // namespace troupe
