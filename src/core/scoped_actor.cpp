#include "troupe/core/scoped_actor.hpp"

#include <vector>

#include "core/route_result.hpp"
#include "troupe/core/mailbox_element.hpp"

namespace troupe {

blocking_actor::blocking_actor(actor_system& system) : abstract_actor(system, "scoped_actor") {}

blocking_actor::~blocking_actor() = default;

actor blocking_actor::self() {
  add_strong_ref();
  return actor::adopt(this);
}

std::size_t blocking_actor::mailbox_size() const {
  std::lock_guard guard{mutex_};
  return queue_.size();
}

void blocking_actor::enqueue(mailbox_element_ptr element) {
  {
    std::lock_guard guard{mutex_};
    if (!closed_) {
      queue_.push_back(std::move(element));
      arrived_.notify_one();
      return;
    }
  }
  bounce(*element, exit_reason());
}

void blocking_actor::stop(const error& reason) {
  std::deque<mailbox_element_ptr> rest;
  {
    std::lock_guard guard{mutex_};
    if (closed_) return;
    closed_ = true;
    rest.swap(queue_);
  }
  finish(reason);
  for (auto& element : rest) bounce(*element, reason);
}

bool blocking_actor::receive_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                                   const behavior& handlers) {
  std::size_t scanned = 0;  // messages before this index did not match
  for (;;) {
    mailbox_element_ptr element;
    {
      std::unique_lock lock{mutex_};
      auto ready = [&] { return queue_.size() > scanned; };
      if (deadline) {
        if (!arrived_.wait_until(lock, *deadline, ready)) return false;
      } else {
        arrived_.wait(lock, ready);
      }
      element = std::move(queue_[scanned]);
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(scanned));
    }
    current_ = element.get();
    answered_ = false;
    bool matched = handlers.invoke(element->content, *this);
    current_ = nullptr;
    if (matched) return true;
    std::lock_guard guard{mutex_};
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(scanned), std::move(element));
    ++scanned;
  }
}

void blocking_actor::reply(message result) {
  if (current_ == nullptr || answered_) return;
  answered_ = true;
  detail::route_result(current_->sender, current_->mid, current_->stages, std::move(result), this);
}

response_promise blocking_actor::make_response_promise() {
  if (current_ == nullptr) return {};
  answered_ = true;
  return response_promise{this, *current_};
}

scoped_actor::scoped_actor(actor_system& system)
    : impl_(new blocking_actor(system)), handle_(actor::adopt(impl_)) {}

scoped_actor::~scoped_actor() {
  impl_->stop({});
}

void send_exit(const actor& receiver, error reason) {
  if (receiver)
    receiver->enqueue(make_mailbox_element({}, {}, {}, exit_msg{{}, std::move(reason)}));
}

}  // namespace troupe
