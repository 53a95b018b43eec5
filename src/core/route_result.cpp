#include "core/route_result.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "troupe/core/abstract_actor.hpp"

namespace troupe::detail {

void respond_with_error(mailbox_element& element, const error& reason, abstract_actor* responder) {
  route_result(element.sender, element.mid, element.stages, make_message(reason), responder);
}

namespace {

void deliver(const actor& receiver, actor sender, message_id mid, std::vector<actor> stages,
             message content) {
  auto element = std::make_unique<mailbox_element>();
  element->sender = std::move(sender);
  element->mid = mid;
  element->stages = std::move(stages);
  element->content = std::move(content);
  receiver->enqueue(std::move(element));
}

/// A strong handle to the responder, or none if it is already unreachable.
actor handle_of(abstract_actor* responder) {
  return responder != nullptr && responder->try_add_strong_ref() ? actor::adopt(responder)
                                                                 : actor{};
}

}  // namespace

void route_result(actor& sender, message_id mid, std::vector<actor>& stages, message result,
                  abstract_actor* responder) {
  bool failed = result.match<error>();
  if (failed) stages.clear();  // an error skips the remaining stages
  if (!stages.empty()) {
    // The next stage receives the result as if the original requester had sent it.
    auto next = std::move(stages.back());
    stages.pop_back();
    deliver(next, sender, mid, std::move(stages), std::move(result));
    return;
  }
  if (!sender) return;
  if (mid.is_request()) {
    deliver(sender, handle_of(responder), mid.response_id(), {}, std::move(result));
  } else if (!failed && !result.empty()) {
    // As in CAF: a non-empty result of an asynchronous message goes back to its sender.
    deliver(sender, handle_of(responder), message_id{}, {}, std::move(result));
  }
}

}  // namespace troupe::detail
