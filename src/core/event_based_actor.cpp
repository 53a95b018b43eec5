#include "troupe/core/event_based_actor.hpp"

#include <exception>

#include "core/route_result.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe {

event_based_actor::event_based_actor(actor_system& system, std::string name)
    : abstract_actor(system, std::move(name)), throughput_(system.settings().throughput) {}

event_based_actor::~event_based_actor() = default;

actor event_based_actor::self() {
  add_strong_ref();
  return actor::adopt(this);
}

const actor& event_based_actor::current_sender() const noexcept {
  static const actor none;
  return current_ != nullptr ? current_->sender : none;
}

// -- behavior -----------------------------------------------------------------

void event_based_actor::become(behavior b) {
  if (!behaviors_.empty()) behaviors_.pop_back();
  behaviors_.push_back(std::move(b));
}

void event_based_actor::become(keep_behavior_t, behavior b) {
  behaviors_.push_back(std::move(b));
}

void event_based_actor::unbecome() {
  if (!behaviors_.empty()) behaviors_.pop_back();
}

void event_based_actor::quit(error reason) {
  if (quitting_) return;
  quitting_ = true;
  quit_reason_ = std::move(reason);
}

// -- messaging ----------------------------------------------------------------

response_handle event_based_actor::request_impl(
    const actor& receiver, std::optional<std::chrono::steady_clock::duration> timeout,
    message content) {
  if (receiver) receiver->check_sendable(*content.types());
  auto mid = message_id::make_request(next_request_++);
  auto element = std::make_unique<mailbox_element>();
  element->sender = self();
  element->mid = mid;
  element->content = std::move(content);
  // The handler is registered by response_handle::then, which runs before this actor handles
  // its next message; so the response cannot overtake it.
  auto& entry = pending_[mid.sequence()];  // counts as work left from now on
  if (timeout) {
    auto deadline = std::chrono::steady_clock::now() + *timeout;
    auto description_text =
        "request to " + (receiver ? receiver->description() : "an empty handle");
    entry.timeout =
        system().timers().schedule(deadline, [addr = actor_addr{this}, mid, description_text] {
          if (auto target = addr.lock())
            target->enqueue(make_mailbox_element(
                {}, mid.response_id(), {},
                error{errc::request_timeout, description_text + " timed out"}));
        });
  }
  if (receiver) {
    receiver->enqueue(std::move(element));
  } else {
    enqueue(
        make_mailbox_element({}, mid.response_id(), {},
                             error{errc::invalid_argument, "request to an empty actor handle"}));
  }
  return response_handle{this, mid};
}

void event_based_actor::add_response_handler(message_id mid, std::function<void(message&)> on_value,
                                             std::function<void(error&)> on_error) {
  auto& entry = pending_[mid.sequence()];
  entry.on_value = std::move(on_value);
  entry.on_error = std::move(on_error);
}

void event_based_actor::delegate_message(const actor& receiver, message content) {
  if (current_ == nullptr) return;
  if (receiver) receiver->check_sendable(*content.types());
  answered_ = true;
  auto element = std::make_unique<mailbox_element>();
  element->sender = current_->sender;
  element->mid = current_->mid;
  element->stages = std::move(current_->stages);
  element->content = std::move(content);
  if (receiver) {
    receiver->enqueue(std::move(element));
  } else {
    detail::respond_with_error(
        *element, error{errc::invalid_argument, description() + " delegated to an empty handle"},
        this);
  }
}

response_promise event_based_actor::make_response_promise() {
  if (current_ == nullptr) return {};
  answered_ = true;
  return response_promise{this, *current_};
}

void event_based_actor::reply(message result) {
  if (current_ == nullptr || answered_) return;
  answered_ = true;
  detail::route_result(current_->sender, current_->mid, current_->stages, std::move(result), this);
}

// -- monitoring and linking ---------------------------------------------------

void event_based_actor::monitor(const actor& other) {
  if (other) other->add_monitor(actor_addr{this});
}

void event_based_actor::demonitor(const actor& other) {
  if (other) other->remove_monitor(actor_addr{this});
}

void event_based_actor::link_to(const actor& other) {
  if (!other || other.get() == this) return;
  add_link(other.address());
  other->add_link(actor_addr{this});
}

void event_based_actor::unlink_from(const actor& other) {
  if (!other) return;
  remove_link(other.address());
  other->remove_link(actor_addr{this});
}

void event_based_actor::set_down_handler(std::function<void(down_msg&)> handler) {
  down_handler_ = std::move(handler);
}

void event_based_actor::set_exit_handler(std::function<void(exit_msg&)> handler) {
  exit_handler_ = std::move(handler);
}

void event_based_actor::set_error_handler(std::function<void(error&)> handler) {
  error_handler_ = std::move(handler);
}

void event_based_actor::set_default_handler(default_handler handler) {
  default_handler_ = std::move(handler);
}

// -- scheduling ---------------------------------------------------------------

void event_based_actor::enqueue(mailbox_element_ptr element) {
  auto* raw = element.release();
  switch (mailbox_.push(raw)) {
    case detail::mailbox::push_result::ok:
      return;
    case detail::mailbox::push_result::unblocked_reader:
      add_strong_ref();  // held by the scheduler until the actor blocks again
      system().scheduler().schedule(this);
      return;
    case detail::mailbox::push_result::closed: {
      mailbox_element_ptr owned{raw};
      bounce(*owned, exit_reason());
      return;
    }
  }
}

void event_based_actor::run() noexcept {
  if (!initialized_) initialize();
  for (std::size_t handled = 0; !quitting_ && handled < throughput_;) {
    auto* raw = mailbox_.pop();
    if (raw == nullptr) {
      if (mailbox_.try_block()) {
        release_strong_ref();  // may destroy this actor: nothing may follow
        return;
      }
      continue;
    }
    mailbox_element_ptr element{raw};
    process(*element);
    ++handled;
    if (!quitting_ && !has_work_left()) quit();
  }
  if (quitting_) {
    cleanup();
    release_strong_ref();
    return;
  }
  // Used up its throughput: give others a turn, keeping the scheduler's reference.
  system().scheduler().schedule_fair(this);
}

void event_based_actor::initialize() {
  initialized_ = true;
  try {
    auto initial = make_behavior();
    if (initial) behaviors_.push_back(std::move(initial));
  } catch (const std::exception& e) {
    quit(error{errc::unhandled_exception,
               description() + " ended: make_behavior threw: " + e.what()});
    return;
  } catch (...) {
    quit(error{errc::unhandled_exception,
               description() + " ended: make_behavior threw a non-standard exception"});
    return;
  }
  if (!has_work_left()) quit();
}

bool event_based_actor::has_work_left() const noexcept {
  return !behaviors_.empty() || !pending_.empty();
}

void event_based_actor::process(mailbox_element& element) {
  detail::stage_trace::record(detail::stage_trace::point::message_taken);
  current_ = &element;
  answered_ = false;
  try {
    if (element.mid.is_response()) {
      handle_response(element);
    } else if (element.content.match<exit_msg>()) {
      handle_exit(element);
    } else if (element.content.match<down_msg>()) {
      handle_down(element);
    } else {
      // Copy the handle: a handler may become() and so destroy the behavior it runs in.
      auto current = behaviors_.empty() ? behavior{} : behaviors_.back();
      if (!current.invoke(element.content, *this)) handle_unexpected(element);
    }
  } catch (const std::exception& e) {
    fail_current(e.what());
  } catch (...) {
    fail_current("a non-standard exception");
  }
  current_ = nullptr;
  detail::stage_trace::record(detail::stage_trace::point::message_done);
}

void event_based_actor::fail_current(const std::string& what) {
  error reason{errc::unhandled_exception, description() + " ended: a handler threw: " + what};
  if (!answered_ && current_ != nullptr) {
    answered_ = true;
    detail::route_result(current_->sender, current_->mid, current_->stages, make_message(reason),
                         this);
  }
  quit(std::move(reason));
}

void event_based_actor::handle_response(mailbox_element& element) {
  auto it = pending_.find(element.mid.sequence());
  if (it == pending_.end()) return;  // late: its timeout fired first
  auto entry = std::move(it->second);
  pending_.erase(it);
  system().timers().cancel(entry.timeout);
  if (!entry.on_value) return;  // then() was never called on the handle
  entry.on_value(element.content);
}

void event_based_actor::handle_exit(mailbox_element& element) {
  auto& msg = *static_cast<exit_msg*>(element.content.mutable_at(0));
  auto code = msg.reason.code();
  if (exit_handler_ && code != errc::kill && code != errc::user_shutdown) {
    exit_handler_(msg);
  } else if (code != errc::none) {
    quit(msg.reason);
  }
}

void event_based_actor::handle_down(mailbox_element& element) {
  if (down_handler_) {
    down_handler_(*static_cast<down_msg*>(element.content.mutable_at(0)));
    return;
  }
  if (!behaviors_.empty()) {
    auto current = behaviors_.back();
    current.invoke(element.content, *this);
  }
}

void event_based_actor::handle_unexpected(mailbox_element& element) {
  // A requester waits for an answer, so it gets one whatever the default handler would do.
  if (element.mid.is_request()) {
    reply(make_message(
        error{errc::unexpected_message,
              description() + " has no handler for a message of " + element.content.type_names()}));
    return;
  }
  // A copy: the handler may replace itself (set_default_handler) while it runs.
  auto handler = default_handler_ ? default_handler_ : system().settings().default_handler;
  auto result = handler(this, element.content);
  if (!result.empty()) reply(std::move(result));
}

void event_based_actor::on_unreachable() {
  // Only reached when no handle exists and the actor is not scheduled: nobody else touches it.
  if (!is_terminated()) {
    quit(error{errc::unreachable, description() + " ended: no handle refers to it any more"});
    cleanup();
  }
}

void event_based_actor::cleanup() {
  auto reason = quit_reason_;
  for (auto& element : mailbox_.close()) {
    // A response still in the mailbox is a timeout or answer nobody waits for any more.
    bounce(*element, reason);
  }
  for (auto& [sequence, entry] : pending_) system().timers().cancel(entry.timeout);
  pending_.clear();
  // Release captured handles now: behaviors that refer to each other would otherwise keep
  // their actors alive.
  behaviors_.clear();
  down_handler_ = nullptr;
  exit_handler_ = nullptr;
  error_handler_ = nullptr;
  default_handler_ = nullptr;
  finish(reason);
  system().actor_finished(this);
}

}  // namespace troupe
