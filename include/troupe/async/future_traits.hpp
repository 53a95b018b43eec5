#pragma once

#include <type_traits>

namespace troupe {

template <class T>
class future;
template <class T>
class shared_future;

namespace detail {

/// Whether T is a future or a shared_future.
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

}  // namespace detail

}  // namespace troupe
