#pragma once

#include <exception>
#include <type_traits>
#include <utility>

#include "troupe/async/error.hpp"
#include "troupe/async/executor.hpp"
#include "troupe/async/future_access.hpp"
#include "troupe/async/future_traits.hpp"
#include "troupe/async/shared_state.hpp"

// How then() attaches a continuation, for future and shared_future alike.

namespace troupe::detail {

/// The executor a continuation runs on when none is named: the source state's, else the current
/// worker's scheduler, else none (inline).
inline intrusive_ptr<executor> default_continuation_executor(const state_base& src) {
  if (src.default_executor()) return src.default_executor();
  return intrusive_ptr<executor>{this_thread_executor()};
}

/// A continuation's result keeps the source's executor, else takes the one it ran on (`ex`).
inline intrusive_ptr<executor> inherited_executor(const state_base& src,
                                                  const intrusive_ptr<executor>& ex) {
  return src.default_executor() ? src.default_executor() : ex;
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

/// The then() of future and shared_future: attaches `f` to `src`, to run on `ex` (inline if
/// none) once `src` is ready, and returns the future of its result; R is what f returns, a
/// returned future is unwrapped. `Call` says how f is called: `Call::takes_future` when f takes
/// the (shared) future itself, and so sees an error; else an error skips f and becomes the
/// result's. `Call::call(fn, src)` calls f. `src` is taken only once the result's state is
/// made, so that a future whose then() runs out of memory keeps its state.
template <class R, class Call, class T, class F>
future<typename unwrapped<R>::type> attach_then(intrusive_ptr<shared_state<T>>&& src,
                                                intrusive_ptr<executor> ex, F&& f) {
  using U = typename unwrapped<R>::type;
  auto out = make_counted<shared_state<U>>(inherited_executor(*src, ex));
  if (src->settled_by_promise()) out->set_settled_by_promise();
  auto* raw = src.get();
  raw->attach(make_continuation(
      std::move(ex), [src = std::move(src), out, fn = std::forward<F>(f)]() mutable noexcept {
        if constexpr (!Call::takes_future) {
          if (src->has_error()) {
            out->try_set_error(src->error());
            return;
          }
        }
        complete_with(out, [&] { return Call::call(fn, src); });
      }));
  return future_access::make<future<U>>(std::move(out));
}

}  // namespace troupe::detail
