#pragma once

#include <chrono>
#include <future>
#include <string>
#include <utility>

#include "troupe/async/error.hpp"
#include "troupe/async/shared_state.hpp"

namespace troupe::detail {

/// What future and shared_future have in common: the state and the ways to wait for it.
template <class T>
class future_base {
 public:
  // -- properties -----------------------------------------------------------

  /// False when there is no state: default-constructed, moved from, or consumed by get(),
  /// then() or share() (for a future).
  bool valid() const noexcept { return static_cast<bool>(state_); }

  /// True once ready, with a value or an error.
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

  /// Like wait(), for at most `timeout`.
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

  state_ptr state_;
};

}  // namespace troupe::detail
