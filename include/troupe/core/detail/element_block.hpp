#pragma once

#include "troupe/core/message.hpp"

namespace troupe::detail {

/// Layout of one allocation that holds an element (a mailbox_element) and its message data.
template <class Element, class Data>
struct element_block {
  shared_block header;
  alignas(Element) unsigned char element[sizeof(Element)];
  alignas(Data) unsigned char data[sizeof(Data)];
};

}  // namespace troupe::detail
