#include "net/command_channel.hpp"

#include <utility>

#include "troupe/async/future_access.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/core/request.hpp"

namespace troupe::net::detail {

command_channel::command_channel(actor_system& system)
    : abstract_actor(system, "device commands") {}

actor command_channel::make(actor_system& system) {
  return actor::adopt(new command_channel(system));
}

future<bulk_bytes> command_channel::request(const actor& server, device_command c,
                                            bulk_bytes data) {
  auto state = troupe::detail::make_counted<answer_state>(
      troupe::detail::intrusive_ptr<executor>{&system().default_executor()});
  auto answer = troupe::detail::future_access::make<future<bulk_bytes>>(state);
  std::uint64_t sequence = 0;
  {
    std::lock_guard guard{mutex_};
    sequence = next_++;
    waiting_.emplace(sequence, std::move(state));
  }
  add_strong_ref();
  server->enqueue(make_mailbox_element(actor::adopt(this), message_id::make_request(sequence), {},
                                       std::move(c), std::move(data)));
  return answer;
}

void command_channel::enqueue(mailbox_element_ptr element) {
  if (!element->mid.is_response()) {
    bounce(*element, error{errc::invalid_argument, description() + " takes only answers"});
    return;
  }
  troupe::detail::intrusive_ptr<answer_state> state;
  {
    std::lock_guard guard{mutex_};
    auto it = waiting_.find(element->mid.sequence());
    if (it == waiting_.end()) return;  // answered already: a request is answered once
    state = std::move(it->second);
    waiting_.erase(it);
  }
  troupe::detail::complete_from_response(*state, element->content);
}

void command_channel::on_unreachable() {
  // The network keeps a handle while a request is on its way, so nothing should wait now.
  std::unordered_map<std::uint64_t, troupe::detail::intrusive_ptr<answer_state>> waiting;
  {
    std::lock_guard guard{mutex_};
    waiting.swap(waiting_);
  }
  for (auto& [sequence, state] : waiting)
    state->try_set_error(std::make_exception_ptr(
        error{errc::broken_promise, "a device command was dropped without an answer"}));
  finish({});
}

}  // namespace troupe::net::detail
