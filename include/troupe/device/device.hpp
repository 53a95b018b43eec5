#pragma once

#include <cstddef>
#include <string>

#include "troupe/async/future.hpp"
#include "troupe/device/buffer.hpp"
#include "troupe/device/detail/buffer_state.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/device/detail/host_memory_state.hpp"
#include "troupe/device/device_info.hpp"
#include "troupe/device/device_queue.hpp"
#include "troupe/device/host_buffer.hpp"
#include "troupe/device/program.hpp"

namespace troupe {

/// One OpenCL or CUDA device, found by `actor_system::devices()`. Cheap to copy. Every
/// operation returns a future or fails with a troupe::error that names the device; once the
/// actor system is gone, operations fail with errc::system_gone.
class device {
 public:
  // -- constructors ---------------------------------------------------------

  device() = default;
  explicit device(detail::intrusive_ptr<detail::device_state> state) : state_(std::move(state)) {}

  // -- properties -----------------------------------------------------------

  bool valid() const noexcept { return static_cast<bool>(state_); }
  const device_info& info() const;
  const std::string& name() const { return info().name; }
  troupe::backend backend() const { return info().backend; }

  friend bool operator==(const device& a, const device& b) noexcept { return a.state_ == b.state_; }

  const detail::intrusive_ptr<detail::device_state>& state() const noexcept { return state_; }

  // -- memory ---------------------------------------------------------------

  /// `count` elements of device memory (uninitialised). Throws troupe::error
  /// (errc::out_of_device_memory) naming the size and the device.
  template <class T>
  buffer<T> allocate(std::size_t count) const {
    return buffer<T>{detail::allocate_buffer(checked(), count * sizeof(T), "device::allocate"),
                     count};
  }

  /// `count` elements of page-locked host memory for truly asynchronous copies.
  template <class T>
  host_buffer<T> allocate_host(std::size_t count) const {
    return host_buffer<T>{
        detail::allocate_host_memory(checked(), count * sizeof(T), "device::allocate_host"), count};
  }

  // -- programs -------------------------------------------------------------

  /// Compiles `source` (OpenCL C on OpenCL devices, CUDA C++ through NVRTC on CUDA devices)
  /// off the scheduler's threads. A compile error fails the future with errc::compile_error and
  /// the full build log. Programs are cached in memory, and on disk (TROUPE_KERNEL_CACHE).
  future<program> compile(const std::string& source, const std::string& options = {}) const;

  // -- queues ---------------------------------------------------------------

  /// The queue that buffer operations and device::launch use.
  device_queue default_queue() const;
  /// A new in-order queue; commands of different queues overlap.
  device_queue make_queue() const;

  /// Launches on the default queue; see device_queue::launch.
  template <class Shape, class... Args>
  future<void> launch(const program& prog, std::string name, const Shape& shape,
                      const Args&... args) const {
    return default_queue().launch(prog, std::move(name), shape, args...);
  }

 private:
  detail::device_state& checked() const;

  detail::intrusive_ptr<detail::device_state> state_;
};

template <class T>
troupe::device buffer<T>::device() const {
  return troupe::device{state_ ? state_->device_handle() : nullptr};
}

}  // namespace troupe
