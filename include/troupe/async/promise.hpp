#pragma once

#include <exception>
#include <utility>

#include "troupe/async/future.hpp"

namespace troupe {

/// The producing end of a future. Destroying an unsatisfied promise fails its future with
/// `errc::broken_promise`, so a consumer never waits forever on a forgotten promise.
template <class T>
class promise {
 public:
  // -- constructors ---------------------------------------------------------

  promise() : state_(detail::make_counted<detail::shared_state<T>>()) {
    state_->set_settled_by_promise();
  }

  /// Continuations of the future default to `ex`.
  explicit promise(executor& ex)
      : state_(
            detail::make_counted<detail::shared_state<T>>(detail::intrusive_ptr<executor>{&ex})) {
    state_->set_settled_by_promise();
  }

  promise(promise&&) noexcept = default;
  promise& operator=(promise&& other) noexcept {
    abandon();
    state_ = std::move(other.state_);
    retrieved_ = other.retrieved_;
    return *this;
  }
  ~promise() { abandon(); }

  // -- operations -----------------------------------------------------------

  /// The future of this promise; callable once.
  future<T> get_future() {
    require_state("get_future");
    if (retrieved_)
      throw error(errc::invalid_argument, "promise::get_future: the future was already retrieved");
    retrieved_ = true;
    return detail::future_access::make<future<T>>(state_);
  }

  template <class... Args>
  void set_value(Args&&... args) {
    require_state("set_value");
    state_->set_value(std::forward<Args>(args)...);
  }

  void set_exception(std::exception_ptr e) {
    require_state("set_exception");
    state_->set_error(std::move(e));
  }

  /// Sets the value unless the promise was satisfied already; returns whether it did.
  template <class... Args>
  bool try_set_value(Args&&... args) {
    return state_ && state_->try_set_value(std::forward<Args>(args)...);
  }

  bool try_set_exception(std::exception_ptr e) noexcept {
    return state_ && state_->try_set_error(std::move(e));
  }

 private:
  void require_state(const char* operation) const {
    if (!state_)
      throw error(errc::no_state,
                  std::string{"promise::"} + operation + ": this promise was moved from");
  }

  void abandon() noexcept {
    if (state_)
      state_->try_set_error(std::make_exception_ptr(
          error(errc::broken_promise, "promise destroyed before it was satisfied")));
  }

  detail::intrusive_ptr<detail::shared_state<T>> state_;
  bool retrieved_ = false;
};

}  // namespace troupe
