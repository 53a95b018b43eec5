#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "troupe/async/executor.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/behavior.hpp"
#include "troupe/core/default_handler.hpp"
#include "troupe/core/detail/mailbox.hpp"
#include "troupe/core/detail/timer_service.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/core/response_promise.hpp"

namespace troupe {

/// Tag for become(): push the new behavior and keep the old one for unbecome().
struct keep_behavior_t {
  explicit constexpr keep_behavior_t() = default;
};
inline constexpr keep_behavior_t keep_behavior{};

class event_based_actor;

/// What `request` inside an actor returns: say what to do with the response. Nothing blocks;
/// the handler runs later, in this actor, when the response (or an error) arrives.
class response_handle {
 public:
  response_handle(event_based_actor* self, message_id mid) : self_(self), mid_(mid) {}

  /// `on_value` takes the response's element types; `on_error(error&)` gets timeouts, a dead
  /// receiver, error responses and responses of another type. Without `on_error`, an error ends
  /// the actor with that error (see event_based_actor::set_error_handler).
  template <class OnValue, class OnError>
  void then(OnValue on_value, OnError on_error);

  template <class OnValue>
  void then(OnValue on_value);

 private:
  event_based_actor* self_;
  message_id mid_;
};

/// An actor driven by messages: it runs on the scheduler only while it has messages, and never
/// blocks a worker. Spawn one from a function (see actor_system::spawn), or derive from it and
/// override make_behavior() to keep state in members.
class event_based_actor : public abstract_actor, public job, private detail::response_context {
 public:
  // -- constructors ---------------------------------------------------------

  explicit event_based_actor(actor_system& system, std::string name = "actor");
  ~event_based_actor() override;

  // -- properties -----------------------------------------------------------

  /// A strong handle to this actor.
  actor self();

  /// The sender of the message being handled (empty for anonymous sends).
  const actor& current_sender() const noexcept;

  // -- behavior -------------------------------------------------------------

  /// The initial behavior. An actor that ends up with no behavior and no pending response
  /// handler quits.
  virtual behavior make_behavior() { return {}; }

  /// Replaces the current behavior.
  void become(behavior b);
  /// Pushes a behavior; unbecome() returns to the previous one.
  void become(keep_behavior_t, behavior b);
  void unbecome();

  /// Ends this actor after the current handler returns.
  void quit(error reason = {});

  // -- messaging ------------------------------------------------------------

  template <class... Ts>
  void send(const actor& receiver, Ts&&... xs) {
    if (!receiver) return;
    receiver->check_sendable(detail::type_list_of<detail::strip_t<Ts>...>);
    receiver->enqueue(make_mailbox_element(self(), {}, {}, std::forward<Ts>(xs)...));
  }

  /// Sends a request; say what to do with the response through the returned handle.
  template <class... Ts>
  [[nodiscard]] response_handle request(const actor& receiver, Ts&&... xs) {
    return request_impl(receiver, std::nullopt, make_message(std::forward<Ts>(xs)...));
  }

  /// Sends a request that fails with errc::request_timeout if no response arrives in time.
  template <class Rep, class Period, class... Ts>
  [[nodiscard]] response_handle request(const actor& receiver,
                                        std::chrono::duration<Rep, Period> timeout, Ts&&... xs) {
    return request_impl(receiver,
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout),
                        make_message(std::forward<Ts>(xs)...));
  }

  /// Forwards the current request to `receiver`, which answers the original requester.
  template <class... Ts>
  delegated delegate(const actor& receiver, Ts&&... xs) {
    delegate_message(receiver, make_message(std::forward<Ts>(xs)...));
    return {};
  }

  /// Takes over answering the current message; deliver through the promise later.
  response_promise make_response_promise() override;

  /// Spawns another actor in this actor's system, like actor_system::spawn (both are defined
  /// in actor_system.hpp).
  template <class Impl, class... Args>
  requires std::is_base_of_v<event_based_actor, Impl> actor spawn(Args&&... args);
  template <class F, class... Args>
  requires(!std::is_base_of_v<event_based_actor, F>) actor spawn(F f, Args... args);

  // -- monitoring and linking -----------------------------------------------

  /// Delivers a down_msg to this actor when `other` ends.
  void monitor(const actor& other);
  void demonitor(const actor& other);

  /// Links both ways: when one ends with a reason other than none, the other gets an exit_msg.
  void link_to(const actor& other);
  void unlink_from(const actor& other);

  /// Handles down messages (default: the behavior may handle down_msg; else it is dropped).
  void set_down_handler(std::function<void(down_msg&)> handler);

  /// Traps exit messages (default: an exit reason other than none ends this actor too).
  void set_exit_handler(std::function<void(exit_msg&)> handler);

  /// Handles errors of requests made without an error handler (default: quit with the error).
  void set_error_handler(std::function<void(error&)> handler);

  /// Decides what happens to asynchronous messages that no handler of the behavior matches: one
  /// of troupe::default_handlers (drop, print_and_drop, reflect, reflect_and_quit) or a function
  /// of your own (see troupe::default_handler). An empty handler restores the system's
  /// (config::default_handler, print_and_drop unless set). A request that no handler matches
  /// always gets an errc::unexpected_message error naming this actor and the message's types.
  void set_default_handler(default_handler handler);

  // -- internals ------------------------------------------------------------

  void enqueue(mailbox_element_ptr element) override;
  void run() noexcept override;

 protected:
  void on_unreachable() override;

 private:
  friend class response_handle;
  friend class actor_system;

  struct pending_response {
    std::function<void(message&)> on_value;
    std::function<void(error&)> on_error;
    detail::timer_service::handle timeout;
  };

  response_handle request_impl(const actor& receiver,
                               std::optional<std::chrono::steady_clock::duration> timeout,
                               message content);
  void delegate_message(const actor& receiver, message content);
  void add_response_handler(message_id mid, std::function<void(message&)> on_value,
                            std::function<void(error&)> on_error);
  void reply(message result) override;

  void initialize();
  void process(mailbox_element& element);
  void handle_response(mailbox_element& element);
  void handle_exit(mailbox_element& element);
  void handle_down(mailbox_element& element);
  void handle_unexpected(mailbox_element& element);
  void fail_current(const std::string& what);
  bool has_work_left() const noexcept;
  void cleanup();

  detail::mailbox mailbox_;
  std::vector<behavior> behaviors_;
  std::unordered_map<std::uint64_t, pending_response> pending_;
  std::uint64_t next_request_ = 1;
  mailbox_element* current_ = nullptr;
  bool answered_ = false;
  bool initialized_ = false;
  bool quitting_ = false;
  error quit_reason_;
  std::size_t throughput_;
  std::function<void(down_msg&)> down_handler_;
  std::function<void(exit_msg&)> exit_handler_;
  std::function<void(error&)> error_handler_;
  default_handler default_handler_;  // empty: the system's

 public:
  // Intrusive list of the system's live actors (for shutdown); touched under the system's lock.
  event_based_actor* live_prev = nullptr;
  event_based_actor* live_next = nullptr;
};

template <class OnValue, class OnError>
void response_handle::then(OnValue on_value, OnError on_error) {
  std::function<void(error&)> error_fn = std::move(on_error);
  auto value_fn = [f = std::move(on_value), error_fn](message& msg) mutable {
    auto ignore = [](auto&&...) {};
    if (detail::try_invoke(f, msg, ignore)) return;
    if (msg.match<error>()) {
      auto e = msg.get_as<error>(0);
      error_fn(e);
      return;
    }
    error e{
        errc::unexpected_response,
        "response handler expected " +
            detail::type_names(
                detail::type_list_info_of<typename detail::callable_traits<OnValue>::args>::get()) +
            " but the response was " + msg.type_names()};
    error_fn(e);
  };
  self_->add_response_handler(mid_, std::move(value_fn), error_fn);
}

template <class OnValue>
void response_handle::then(OnValue on_value) {
  auto* self = self_;
  then(std::move(on_value), [self](error& e) {
    if (self->error_handler_) {
      self->error_handler_(e);
    } else {
      self->quit(e);
    }
  });
}

}  // namespace troupe
