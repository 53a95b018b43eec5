#pragma once

#include <cstddef>
#include <memory>
#include <typeinfo>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/device/device_queue.hpp"

namespace troupe::kernel::detail {

/// What one request holds: the queue it runs on, and host inputs kept until the launch has read
/// them.
struct request_memory {
  device_queue queue;  ///< the queue the request runs on
  /// A host input, kept until it is written to the device. A val output of the same type may take
  /// its storage: the output's read comes after the input's write on the in-order queue. A fresh
  /// vector would be allocated and zeroed first, which costs as much as the copy itself (a 4 MB
  /// memset for a 1000 x 1000 result).
  struct host_input {
    std::shared_ptr<void> vector;
    const std::type_info* type;
    std::size_t count;
    bool taken = false;
  };
  std::vector<host_input> inputs;
  std::vector<shared_future<void>> writes;  ///< the writes that read them
  /// The last write of a pinned input (the queue is in order: it ends after the others). A
  /// response with no host output would come before it; it waits for it instead, so that the
  /// sender may reuse its host_buffer once answered.
  shared_future<void> pinned_inputs_read;

  /// An input vector of T with at least `count` elements, taken for an output; else null.
  template <class T>
  std::shared_ptr<std::vector<T>> take(std::size_t count) {
    for (auto& input : inputs) {
      if (!input.taken && *input.type == typeid(std::vector<T>) && input.count >= count) {
        input.taken = true;
        return std::static_pointer_cast<std::vector<T>>(input.vector);
      }
    }
    return nullptr;
  }
};

}  // namespace troupe::kernel::detail
