#pragma once

#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "troupe/core/abstract_actor.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/detail/element_block.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/message_id.hpp"

namespace troupe {

/// One message in a mailbox, with its routing: who sent it, its id, and for composed actors the
/// stages that get the result before the sender does (the next stage is at the back). Owned by
/// a mailbox_element_ptr (declared with abstract_actor::enqueue, which takes one).
struct mailbox_element {
  mailbox_element() = default;
  mailbox_element(const mailbox_element&) = delete;
  mailbox_element& operator=(const mailbox_element&) = delete;

  /// Elements made by make_mailbox_element share one allocation with their message data.
  static void operator delete(mailbox_element* element, std::destroying_delete_t) noexcept {
    auto* block = element->block;
    element->~mailbox_element();
    if (block != nullptr) {
      block->release();
    } else {
      ::operator delete(element);
    }
  }

  /// The next element in a mailbox (used by the mailbox only).
  mailbox_element* next = nullptr;
  /// Who sent it (empty if no actor did).
  actor sender;
  /// A request's id, a response's id, or none for an asynchronous message.
  message_id mid;
  /// The stages of a composition still to run, the next one at the back.
  std::vector<actor> stages;
  /// The message itself.
  message content;
  /// The allocation shared with the message data, if make_mailbox_element made one.
  detail::shared_block* block = nullptr;
};

/// An element of `xs...` from `sender` with id `mid` and composition `stages`. Where the message
/// data allows, element and data share one allocation.
template <class... Ts>
mailbox_element_ptr make_mailbox_element(actor sender, message_id mid, std::vector<actor> stages,
                                         Ts&&... xs) {
  using data_type = detail::typed_message_data<detail::strip_t<Ts>...>;
  mailbox_element* result;
  if constexpr (sizeof...(Ts) > 0 && alignof(data_type) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    using block_type = detail::element_block<mailbox_element, data_type>;
    void* raw = ::operator new(sizeof(block_type));
    auto* block = static_cast<block_type*>(raw);
    auto* header = new (&block->header) detail::shared_block;
    data_type* data;
    try {
      data = new (block->data) data_type(std::forward<Ts>(xs)...);
    } catch (...) {
      ::operator delete(raw);
      throw;
    }
    data->set_block(header);
    result = new (block->element) mailbox_element;
    result->block = header;
    result->content = message{detail::intrusive_ptr<detail::message_data>{data, detail::adopt_ref}};
  } else {
    result = new mailbox_element;
    result->content = make_message(std::forward<Ts>(xs)...);
  }
  result->sender = std::move(sender);
  result->mid = mid;
  result->stages = std::move(stages);
  return mailbox_element_ptr{result};
}

}  // namespace troupe
