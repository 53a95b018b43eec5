#include "troupe/core/abstract_actor.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/route_result.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/core/system_messages.hpp"

namespace troupe {

abstract_actor::abstract_actor(actor_system& system, std::string name)
    : system_(system), id_(system.next_actor_id()), name_(std::move(name)) {}

abstract_actor::~abstract_actor() = default;

std::string abstract_actor::description() const {
  return "actor '" + name_ + "' #" + std::to_string(id_);
}

void abstract_actor::check_crossing(const detail::type_list_info& types) const {
  const detail::message_codec* codec = types.codec();
  if (codec->unencodable == nullptr) return;
  throw error(errc::invalid_argument,
              "send to " + description() + ": a message of " + codec->names + " cannot cross " +
                  "nodes, because " + detail::type_name(*codec->unencodable) +
                  " has no cereal serialize function (or no default constructor)");
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
  bool attached = false;
  {
    std::lock_guard guard{mutex_};
    attached = !finished_;
    if (attached)
      attachments_.push_back(std::move(entry));
    else
      reason = exit_reason_;
  }
  if (attached)
    on_watched();
  else
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

}  // namespace troupe
