#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "troupe/core/mailbox_element.hpp"

namespace troupe::detail {

/// An actor's mailbox: many writers, one reader. Writers push onto a lock-free stack with one
/// CAS; the reader takes the whole stack with one exchange and reverses it into a private FIFO
/// cache, so each message costs the reader no atomic operation at all. The head also encodes
/// whether the reader is blocked (the actor is not scheduled), so a push knows when it must
/// schedule the actor, and whether the mailbox is closed.
class mailbox {
 public:
  enum class push_result { ok, unblocked_reader, closed };

  mailbox() = default;
  mailbox(const mailbox&) = delete;
  mailbox& operator=(const mailbox&) = delete;
  ~mailbox() { close(); }  // frees what is left

  push_result push(mailbox_element* element) noexcept {
    auto head = head_.load(std::memory_order_acquire);
    for (;;) {
      if (head == closed_tag) return push_result::closed;
      element->next = head <= blocked_tag ? nullptr : reinterpret_cast<mailbox_element*>(head);
      if (head_.compare_exchange_weak(head, reinterpret_cast<std::uintptr_t>(element),
                                      std::memory_order_acq_rel, std::memory_order_acquire))
        return head == blocked_tag ? push_result::unblocked_reader : push_result::ok;
    }
  }

  /// Reader only: the oldest message, or null.
  mailbox_element* pop() noexcept {
    if (cache_ == nullptr) refill();
    auto* result = cache_;
    if (result != nullptr) cache_ = result->next;
    return result;
  }

  /// Reader only: marks the reader blocked if no message is waiting.
  bool try_block() noexcept {
    if (cache_ != nullptr) return false;
    std::uintptr_t expected = empty_tag;
    return head_.compare_exchange_strong(expected, blocked_tag, std::memory_order_acq_rel);
  }

  /// Closes the mailbox and returns what it still held, oldest first.
  std::vector<mailbox_element_ptr> close() noexcept {
    auto head = head_.exchange(closed_tag, std::memory_order_acq_rel);
    std::vector<mailbox_element_ptr> rest;
    for (auto* e = cache_; e != nullptr;) {
      auto* next = e->next;
      rest.emplace_back(e);
      e = next;
    }
    cache_ = nullptr;
    if (head > closed_tag) {
      auto first = rest.size();
      for (auto* e = reinterpret_cast<mailbox_element*>(head); e != nullptr;) {
        auto* next = e->next;
        rest.emplace_back(e);
        e = next;
      }
      std::reverse(rest.begin() + static_cast<std::ptrdiff_t>(first), rest.end());
    }
    return rest;
  }

  bool closed() const noexcept { return head_.load(std::memory_order_acquire) == closed_tag; }

 private:
  static constexpr std::uintptr_t empty_tag = 0;
  static constexpr std::uintptr_t blocked_tag = 1;
  static constexpr std::uintptr_t closed_tag = 2;

  void refill() noexcept {
    auto head = head_.load(std::memory_order_acquire);
    if (head <= closed_tag) return;
    head = head_.exchange(empty_tag, std::memory_order_acq_rel);
    mailbox_element* reversed = nullptr;
    for (auto* e = reinterpret_cast<mailbox_element*>(head); e != nullptr;) {
      auto* next = e->next;
      e->next = reversed;
      reversed = e;
      e = next;
    }
    cache_ = reversed;
  }

  std::atomic<std::uintptr_t> head_{empty_tag};
  mailbox_element* cache_ = nullptr;
};

}  // namespace troupe::detail
