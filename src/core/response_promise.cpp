#include "troupe/core/response_promise.hpp"

#include "core/route_result.hpp"
#include "troupe/core/mailbox_element.hpp"

namespace troupe {

response_promise::response_promise(abstract_actor* self, mailbox_element& origin)
    : state_(detail::make_counted<state>()) {
  state_->self = actor_addr{self};
  state_->sender = origin.sender;
  state_->mid = origin.mid;
  state_->stages = std::move(origin.stages);
}

bool response_promise::pending() const noexcept {
  return state_ && !state_->done.load(std::memory_order_acquire);
}

void response_promise::deliver_message(message result) {
  if (!state_ || state_->done.exchange(true, std::memory_order_acq_rel)) return;
  auto responder = state_->self.lock();
  detail::route_result(state_->sender, state_->mid, state_->stages, std::move(result),
                       responder.get());
}

response_promise::state::~state() {
  if (done.load(std::memory_order_acquire) || !mid.is_request()) return;
  auto responder = self.lock();
  detail::route_result(
      sender, mid, stages,
      make_message(error{errc::broken_promise, "the response promise of actor #" +
                                                   std::to_string(self.id()) +
                                                   " was destroyed without a response"}),
      responder.get());
}

}  // namespace troupe
