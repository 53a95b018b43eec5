#pragma once

#include <utility>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/device/detail/command.hpp"

namespace troupe {

/// What a device command waits for, made by `after(...)`. A future that a command on the same
/// device produced is waited for on the device (an event in the wait list); any other future is
/// waited for by the runtime's completion path, never by blocking a thread. A failed dependency
/// fails the command with the dependency's error.
class dependencies {
 public:
  dependencies() = default;

  /// Adds a future; it is observed, not consumed, so it stays usable.
  template <class T>
  void add(const future<T>& f) {
    add_state(detail::future_access::state(const_cast<future<T>&>(f)));
  }
  template <class T>
  void add(const shared_future<T>& f) {
    add_state(detail::future_access::state(const_cast<shared_future<T>&>(f)));
  }
  template <class T>
  void add(const std::vector<T>& futures) {
    for (const auto& f : futures) add(f);
  }
  void add(const dependencies& other) {
    for (const auto& e : other.list_.entries) list_.add(e.state, e.order_only);
    list_.has_invalid |= other.list_.has_invalid;
  }
  /// Adds a future to wait for only to keep an order: the command starts after it, whether it
  /// succeeded or failed. (On the device, a command that failed may still fail those waiting
  /// for its event there.)
  template <class T>
  void order_after(const shared_future<T>& f) {
    const auto& state = detail::future_access::state(const_cast<shared_future<T>&>(f));
    if (state)
      list_.add(state, true);
    else
      list_.has_invalid = true;
  }

  bool empty() const noexcept { return list_.entries.empty() && !list_.has_invalid; }
  const detail::dependency_list& list() const noexcept { return list_; }

 private:
  template <class State>
  void add_state(const detail::intrusive_ptr<State>& state) {
    if (state)
      list_.add(state, false);
    else
      list_.has_invalid = true;
  }

  detail::dependency_list list_;
};

/// The dependencies of a device command: any futures (or vectors of them, or other
/// `dependencies`), all of which must be ready before the command starts.
template <class... Futures>
dependencies after(const Futures&... futures) {
  dependencies deps;
  (deps.add(futures), ...);
  return deps;
}

}  // namespace troupe
