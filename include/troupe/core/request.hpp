#pragma once

#include <chrono>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "troupe/async/future.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/mailbox_element.hpp"

namespace troupe {

namespace detail {

/// Completes `state` from a response message, checking that it has the expected type.
template <class R>
void complete_from_response(shared_state<R>& state, message& response) {
  if (response.match<error>()) {
    state.try_set_error(std::make_exception_ptr(response.get_as<error>(0)));
  } else if constexpr (std::is_same_v<R, message>) {
    state.try_set_value(std::move(response));
  } else if constexpr (std::is_void_v<R>) {
    if (response.empty()) {
      state.try_set_value();
      return;
    }
    state.try_set_error(std::make_exception_ptr(
        error{errc::unexpected_response,
              "request<void>: expected an empty response, got " + response.type_names()}));
  } else {
    if (response.match<R>()) {
      state.try_set_value(std::move(*static_cast<R*>(response.mutable_at(0))));
      return;
    }
    state.try_set_error(std::make_exception_ptr(
        error{errc::unexpected_response, "request<" + type_name(typeid(R)) +
                                             ">: expected a response of (" + type_name(typeid(R)) +
                                             "), got " + response.type_names()}));
  }
}

/// The sender of a request made outside any actor: turns the response into a future's value.
/// If it becomes unreachable without a response, the future fails instead of hanging.
template <class R>
class response_sink final : public abstract_actor {
 public:
  response_sink(actor_system& system, intrusive_ptr<shared_state<R>> state)
      : abstract_actor(system, "request"), state_(std::move(state)) {}

  void enqueue(mailbox_element_ptr element) override {
    system().timers().cancel(timeout);
    complete_from_response(*state_, element->content);
  }

  timer_service::handle timeout;

 protected:
  void on_unreachable() override {
    system().timers().cancel(timeout);
    state_->try_set_error(std::make_exception_ptr(
        error{errc::broken_promise, "the request was dropped without a response"}));
    finish({});
  }

 private:
  intrusive_ptr<shared_state<R>> state_;
};

template <class R>
future<R> request_from_outside(const actor& receiver,
                               std::optional<std::chrono::steady_clock::duration> timeout,
                               message content) {
  if (!receiver)
    return make_exceptional_future<R>(
        error{errc::invalid_argument, "request: the receiver is an empty actor handle"});
  receiver->check_sendable(*content.types());
  auto& system = receiver->system();
  auto state = make_counted<shared_state<R>>(intrusive_ptr<executor>{&system.default_executor()});
  auto result = future_access::make<future<R>>(state);
  auto* sink = new response_sink<R>(system, state);
  auto sink_handle = actor::adopt(sink);
  if (timeout) {
    auto what = "request to " + receiver->description() + " timed out";
    sink->timeout =
        system.timers().schedule(std::chrono::steady_clock::now() + *timeout, [state, what] {
          state->try_set_error(std::make_exception_ptr(error{errc::request_timeout, what}));
        });
  }
  auto element = std::make_unique<mailbox_element>();
  element->sender = std::move(sink_handle);
  element->mid = message_id::make_request(1);
  element->content = std::move(content);
  receiver->enqueue(std::move(element));
  return result;
}

}  // namespace detail

/// Sends `xs...` to `receiver` with no sender.
template <class... Ts>
void send(const actor& receiver, Ts&&... xs) {
  if (!receiver) return;
  receiver->check_sendable(detail::type_list_of<detail::strip_t<Ts>...>);
  receiver->enqueue(make_mailbox_element({}, {}, {}, std::forward<Ts>(xs)...));
}

/// Asks `receiver` to end with `reason` (as if a linked actor had ended with it). A reason of
/// errc::kill or errc::user_shutdown cannot be trapped.
void send_exit(const actor& receiver, error reason);

/// Sends a request from outside any actor and returns the future of its response, converted
/// to `R` (message for the raw response, void for an empty one). The future fails with the
/// receiver's error, errc::request_receiver_down if the receiver is or goes dead, or
/// errc::unexpected_response if the response is not an `R`.
template <class R = message, class... Ts>
future<R> request(const actor& receiver, Ts&&... xs) {
  return detail::request_from_outside<R>(receiver, std::nullopt,
                                         make_message(std::forward<Ts>(xs)...));
}

/// Like request(receiver, xs...), failing with errc::request_timeout after `timeout`.
template <class R = message, class Rep, class Period, class... Ts>
future<R> request(const actor& receiver, std::chrono::duration<Rep, Period> timeout, Ts&&... xs) {
  return detail::request_from_outside<R>(
      receiver, std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout),
      make_message(std::forward<Ts>(xs)...));
}

}  // namespace troupe
