#pragma once

#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/device/detail/typed_commands.hpp"
#include "troupe/device/host_buffer.hpp"

namespace troupe {

class device;

/// `size()` elements of T in one device's memory, made by `device::allocate<T>`. Every
/// operation returns a future and runs on the device's default queue (use a device_queue for
/// others). Host memory given to an operation must stay valid until its future is ready. The
/// memory is released when the last handle, and the last command using it, is gone.
template <class T>
class buffer {
 public:
  static_assert(std::is_trivially_copyable_v<T>,
                "buffer<T>: T must be trivially copyable, since its bytes go to the device as is");

  // -- constructors ---------------------------------------------------------

  buffer() = default;
  buffer(detail::intrusive_ptr<detail::buffer_state> state, std::size_t count)
      : state_(std::move(state)), count_(count) {}

  // -- properties -----------------------------------------------------------

  bool valid() const noexcept { return static_cast<bool>(state_); }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }
  /// The device the memory is on.
  troupe::device device() const;
  const detail::intrusive_ptr<detail::buffer_state>& state() const noexcept { return state_; }

  // -- operations -----------------------------------------------------------

  /// Writes `source` to the start of the buffer.
  future<void> write(std::span<const T> source, const dependencies& deps = {}) {
    return write(0, source, deps);
  }
  future<void> write(const T* source, std::size_t count, const dependencies& deps = {}) {
    return write(0, std::span<const T>{source, count}, deps);
  }
  /// Writes `source` to the elements from `offset` on.
  future<void> write(std::size_t offset, std::span<const T> source, const dependencies& deps = {}) {
    return detail::enqueue_write(queue(), state_, offset, source.data(), source.size(), false, {},
                                 deps);
  }
  /// Writes from pinned memory: truly asynchronous.
  future<void> write(const host_buffer<T>& source, const dependencies& deps = {}) {
    return detail::enqueue_write(queue(), state_, 0, source.data(), source.size(), true,
                                 source.state(), deps);
  }

  /// Reads the whole buffer.
  future<std::vector<T>> read(const dependencies& deps = {}) const { return read(0, count_, deps); }
  /// Reads `count` elements from `offset` on.
  future<std::vector<T>> read(std::size_t offset, std::size_t count,
                              const dependencies& deps = {}) const {
    return detail::enqueue_read<T>(queue(), state_, offset, count, deps);
  }
  /// Reads into `destination` the elements from `offset` on.
  future<void> read_into(std::span<T> destination, const dependencies& deps = {}) const {
    return read_into(0, destination, deps);
  }
  future<void> read_into(std::size_t offset, std::span<T> destination,
                         const dependencies& deps = {}) const {
    return detail::enqueue_read_into(queue(), state_, offset, destination.data(),
                                     destination.size(), false, {}, deps);
  }
  /// Reads into pinned memory: truly asynchronous.
  future<void> read_into(const host_buffer<T>& destination, const dependencies& deps = {}) const {
    return detail::enqueue_read_into(queue(), state_, 0, destination.data(), destination.size(),
                                     true, destination.state(), deps);
  }

  /// Sets every element to `value`.
  future<void> fill(const T& value, const dependencies& deps = {}) {
    return fill(value, 0, count_, deps);
  }
  future<void> fill(const T& value, std::size_t offset, std::size_t count,
                    const dependencies& deps = {}) {
    return detail::enqueue_fill(queue(), state_, value, offset, count, deps);
  }

  /// Copies the whole buffer to `target`, which may be on another device (peer copy where the
  /// devices allow it, staged through the host otherwise).
  future<void> copy_to(const buffer& target, const dependencies& deps = {}) const {
    return copy_to(0, target, 0, count_, deps);
  }
  future<void> copy_to(std::size_t offset, const buffer& target, std::size_t target_offset,
                       std::size_t count, const dependencies& deps = {}) const {
    return detail::enqueue_copy<T>(queue(), state_, offset, target.state_, target_offset, count,
                                   deps);
  }

 private:
  detail::queue_state* queue() const {
    return state_ ? &state_->device().default_queue() : nullptr;
  }

  detail::intrusive_ptr<detail::buffer_state> state_;
  std::size_t count_ = 0;
};

}  // namespace troupe
