#pragma once

#include <atomic>
#include <utility>
#include <vector>

#include "troupe/core/actor.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/message_id.hpp"

namespace troupe {

/// The right to answer one request later: the handler that made it returns without replying,
/// and whoever holds the promise delivers the response (or an error). Copies share the right;
/// the first delivery wins. If every copy is destroyed before a delivery, the requester gets
/// `errc::broken_promise`, so a forgotten promise never leaves a requester waiting.
class response_promise {
 public:
  // -- constructors ---------------------------------------------------------

  response_promise() = default;

  /// Takes over answering `origin`, on behalf of `self`.
  response_promise(abstract_actor* self, mailbox_element& origin);

  // -- properties -----------------------------------------------------------

  /// True while a response is still owed.
  bool pending() const noexcept;

  // -- operations -----------------------------------------------------------

  /// Answers with a message of `xs...` (an `error` answers with that error).
  template <class... Ts>
  void deliver(Ts&&... xs) {
    deliver_message(make_message(std::forward<Ts>(xs)...));
  }

  void deliver_message(message result);

 private:
  struct state : detail::ref_counted {
    ~state() override;
    actor_addr self;
    actor sender;
    message_id mid;
    std::vector<actor> stages;
    std::atomic<bool> done{false};
  };

  detail::intrusive_ptr<state> state_;
};

/// Returned by a handler that delegated its request: the delegate answers, not this actor.
struct delegated {};

}  // namespace troupe
