#pragma once

#include <cstddef>
#include <span>

#include "troupe/device/detail/host_memory_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {

/// Page-locked (pinned) host memory of `size()` elements, made by `device::allocate_host`.
/// Copies between it and a buffer are truly asynchronous: no staging, no host thread involved.
/// The memory lives while a handle or a command using it does.
template <class T>
class host_buffer {
 public:
  using value_type = T;

  // -- constructors ---------------------------------------------------------

  host_buffer() = default;
  host_buffer(detail::intrusive_ptr<detail::host_memory_state> state, std::size_t count)
      : state_(std::move(state)), count_(count) {}

  // -- properties -----------------------------------------------------------

  std::size_t size() const noexcept { return count_; }
  T* data() const noexcept { return state_ ? static_cast<T*>(state_->data()) : nullptr; }
  T* begin() const noexcept { return data(); }
  T* end() const noexcept { return data() + count_; }
  T& operator[](std::size_t i) const noexcept { return data()[i]; }
  std::span<T> span() const noexcept { return {data(), count_}; }

  const detail::intrusive_ptr<detail::host_memory_state>& state() const noexcept { return state_; }

 private:
  detail::intrusive_ptr<detail::host_memory_state> state_;
  std::size_t count_ = 0;
};

}  // namespace troupe
