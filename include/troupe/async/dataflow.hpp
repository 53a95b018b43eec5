#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "troupe/async/when_all.hpp"

namespace troupe {

namespace detail {

template <class T>
auto as_future(T&& x) {
  if constexpr (is_future_v<T>)
    return std::forward<T>(x);
  else
    return make_ready_future(std::forward<T>(x));
}

/// The value of a ready future as a tuple: empty for void, so void inputs add no argument.
template <class Future>
auto value_tuple(Future& f) {
  using T = typename std::decay_t<Future>::value_type;
  if constexpr (std::is_void_v<T>) {
    f.get();
    return std::tuple<>{};
  } else {
    return std::tuple<T>{f.get()};
  }
}

}  // namespace detail

/// Calls `f` with the values of all inputs once all are ready, and returns the future of its
/// result (unwrapped if `f` returns a future). Void inputs contribute no argument; plain values
/// pass through. If an input fails, `f` is not called and that error propagates.
template <class F, class... Inputs>
auto dataflow(F&& f, Inputs&&... inputs) {
  using ready_tuple = std::tuple<decltype(detail::as_future(std::declval<Inputs>()))...>;
  return when_all(detail::as_future(std::forward<Inputs>(inputs))...)
      .then([fn = std::forward<F>(f)](ready_tuple ready) mutable {
        return std::apply(
            [&](auto&... fs) { return std::apply(fn, std::tuple_cat(detail::value_tuple(fs)...)); },
            ready);
      });
}

}  // namespace troupe
