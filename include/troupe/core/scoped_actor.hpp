#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "troupe/core/actor.hpp"
#include "troupe/core/behavior.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/core/request.hpp"

namespace troupe {

/// An actor for threads that are not actors (main, tests, tools): it has a mailbox and an
/// identity, and receives by blocking the calling thread. Messages that no handler of a
/// receive() matches stay in the mailbox for a later receive().
class blocking_actor final : public abstract_actor, private detail::response_context {
 public:
  explicit blocking_actor(actor_system& system);
  ~blocking_actor() override;

  actor self();

  template <class... Ts>
  void send(const actor& receiver, Ts&&... xs) {
    if (!receiver) return;
    receiver->check_sendable(detail::type_list_of<detail::strip_t<Ts>...>);
    receiver->enqueue(make_mailbox_element(self(), {}, {}, std::forward<Ts>(xs)...));
  }

  /// Sends a request and returns the future of its response (see troupe::request).
  template <class R = message, class... Ts>
  future<R> request(const actor& receiver, Ts&&... xs) {
    return troupe::request<R>(receiver, std::forward<Ts>(xs)...);
  }

  /// Blocks until a message matching one of `handlers` arrives, and handles it.
  template <class... Fs>
  void receive(Fs... handlers) {
    receive_until(std::nullopt, behavior{std::move(handlers)...});
  }

  /// Like receive(); returns false if nothing matched within `timeout`.
  template <class Rep, class Period, class... Fs>
  bool receive_for(std::chrono::duration<Rep, Period> timeout, Fs... handlers) {
    return receive_until(std::chrono::steady_clock::now() + timeout,
                         behavior{std::move(handlers)...});
  }

  /// Delivers a down_msg to this actor when `other` ends.
  void monitor(const actor& other) {
    if (other) other->add_monitor(actor_addr{this});
  }

  void demonitor(const actor& other) {
    if (other) other->remove_monitor(actor_addr{this});
  }

  /// Messages waiting, matched or not.
  std::size_t mailbox_size() const;

  void enqueue(mailbox_element_ptr element) override;

  /// Ends the actor: monitors and links see `reason`, waiting requests get an error.
  void stop(const error& reason);

 private:
  bool receive_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                     const behavior& handlers);
  void reply(message result) override;
  response_promise make_response_promise() override;

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<mailbox_element_ptr> queue_;
  bool closed_ = false;
  mailbox_element* current_ = nullptr;
  bool answered_ = false;
};

/// Owns a blocking_actor for the lifetime of a scope; `self->receive(...)` and friends.
class scoped_actor {
 public:
  explicit scoped_actor(actor_system& system);
  scoped_actor(const scoped_actor&) = delete;
  scoped_actor& operator=(const scoped_actor&) = delete;
  ~scoped_actor();

  blocking_actor* operator->() const noexcept { return impl_; }
  blocking_actor& operator*() const noexcept { return *impl_; }

  /// The handle of the underlying actor, to pass to others.
  const actor& handle() const noexcept { return handle_; }
  operator const actor&() const noexcept { return handle_; }

 private:
  blocking_actor* impl_;
  actor handle_;
};

}  // namespace troupe
