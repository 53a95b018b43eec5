#include "troupe/core/actor.hpp"

#include "troupe/core/actor_system.hpp"

namespace troupe {

// -- actor and actor_addr ----------------------------------------------------

actor::actor(const actor& other) noexcept : ptr_(other.ptr_) {
  if (ptr_ != nullptr) ptr_->add_strong_ref();
}

actor::~actor() {
  if (ptr_ != nullptr) ptr_->release_strong_ref();
}

actor_id actor::id() const noexcept {
  return ptr_ != nullptr ? ptr_->id() : 0;
}

actor_addr actor::address() const noexcept {
  return actor_addr{ptr_};
}

actor_addr::actor_addr(abstract_actor* ptr) noexcept : ptr_(ptr) {
  if (ptr_ != nullptr) {
    ptr_->add_weak_ref();
    id_ = ptr_->id();
  }
}

actor_addr::actor_addr(const actor_addr& other) noexcept : ptr_(other.ptr_), id_(other.id_) {
  if (ptr_ != nullptr) ptr_->add_weak_ref();
}

actor_addr::~actor_addr() {
  if (ptr_ != nullptr) ptr_->release_weak_ref();
}

actor actor_addr::lock() const noexcept {
  if (ptr_ != nullptr && ptr_->try_add_strong_ref()) return actor::adopt(ptr_);
  return {};
}

// -- abstract_actor -----------------------------------------------------------

abstract_actor::abstract_actor(actor_system& system, std::string name)
    : system_(system), id_(system.next_actor_id()), name_(std::move(name)) {}

abstract_actor::~abstract_actor() = default;

std::string abstract_actor::description() const {
  return "actor '" + name_ + "' #" + std::to_string(id_);
}

bool abstract_actor::is_terminated() const {
  std::lock_guard guard{mutex_};
  return finished_;
}

error abstract_actor::exit_reason() const {
  std::lock_guard guard{mutex_};
  return exit_reason_;
}

void abstract_actor::release_strong_ref() noexcept {
  if (strong_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    on_unreachable();
    release_weak_ref();
  }
}

void abstract_actor::release_weak_ref() noexcept {
  if (weak_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

bool abstract_actor::try_add_strong_ref() noexcept {
  auto count = strong_.load(std::memory_order_relaxed);
  while (count != 0) {
    if (strong_.compare_exchange_weak(count, count + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

void abstract_actor::on_unreachable() {
  finish(error{errc::unreachable, description() + " ended: no handle refers to it any more"});
}

void abstract_actor::attach(attachment entry) {
  error reason;
  {
    std::lock_guard guard{mutex_};
    if (!finished_) {
      attachments_.push_back(std::move(entry));
      return;
    }
    reason = exit_reason_;
  }
  notify(entry, reason);
}

std::uint64_t abstract_actor::attach_hook(std::function<void(const error&)> hook) {
  std::uint64_t token;
  {
    std::lock_guard guard{mutex_};
    token = next_token_++;
  }
  attach({attachment::kind::hook, {}, std::move(hook), token});
  return token;
}

void abstract_actor::detach_hook(std::uint64_t token) {
  std::lock_guard guard{mutex_};
  std::erase_if(attachments_, [&](const attachment& a) { return a.token == token; });
}

void abstract_actor::add_monitor(const actor_addr& observer) {
  attach({attachment::kind::monitor, observer, {}, 0});
}

void abstract_actor::remove_monitor(const actor_addr& observer) {
  std::lock_guard guard{mutex_};
  auto it = std::find_if(attachments_.begin(), attachments_.end(), [&](const attachment& a) {
    return a.type == attachment::kind::monitor && a.peer == observer;
  });
  if (it != attachments_.end()) attachments_.erase(it);
}

void abstract_actor::add_link(const actor_addr& peer) {
  attach({attachment::kind::link, peer, {}, 0});
}

void abstract_actor::remove_link(const actor_addr& peer) {
  std::lock_guard guard{mutex_};
  std::erase_if(attachments_, [&](const attachment& a) {
    return a.type == attachment::kind::link && a.peer == peer;
  });
}

bool abstract_actor::finish(const error& reason) {
  std::vector<attachment> entries;
  {
    std::lock_guard guard{mutex_};
    if (finished_) return false;
    finished_ = true;
    exit_reason_ = reason;
    entries.swap(attachments_);
  }
  for (auto& entry : entries) notify(entry, reason);
  return true;
}

void abstract_actor::notify(attachment& entry, const error& reason) {
  switch (entry.type) {
    case attachment::kind::hook:
      entry.hook(reason);
      break;
    case attachment::kind::monitor:
      if (auto peer = entry.peer.lock())
        peer->enqueue(make_mailbox_element({}, {}, {}, down_msg{actor_addr{this}, reason}));
      break;
    case attachment::kind::link:
      if (auto peer = entry.peer.lock()) {
        peer->remove_link(actor_addr{this});
        peer->enqueue(make_mailbox_element({}, {}, {}, exit_msg{actor_addr{this}, reason}));
      }
      break;
  }
}

void abstract_actor::bounce(mailbox_element& element, const error& reason) {
  if (!element.mid.is_request()) return;
  detail::respond_with_error(
      element,
      error{errc::request_receiver_down, "request to " + description() + " failed: the actor " +
                                             "has ended (" + std::string{to_string(reason.code())} +
                                             (reason.what()[0] != '\0' ? ": " : "") +
                                             reason.what() + ")"},
      this);
}

namespace detail {

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

}  // namespace detail

}  // namespace troupe
