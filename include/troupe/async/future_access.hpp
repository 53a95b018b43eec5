#pragma once

#include <utility>

namespace troupe::detail {

/// Gives the library access to the shared state behind a future (the async layer's combinators,
/// requests, device commands): it takes a future's state and makes a future of a state.
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

}  // namespace troupe::detail
