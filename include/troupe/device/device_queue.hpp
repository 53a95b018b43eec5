#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "troupe/async/future.hpp"
#include "troupe/device/buffer.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/device/detail/launch_arguments.hpp"
#include "troupe/device/detail/queue_state.hpp"
#include "troupe/device/detail/typed_commands.hpp"
#include "troupe/device/nd_range.hpp"
#include "troupe/device/program.hpp"

namespace troupe {

class device;

/// An in-order queue of one device (an OpenCL command queue, a CUDA stream): its commands run
/// one after another in the order they were submitted; commands of different queues overlap
/// (copies with kernels, kernels with kernels). Every command returns a future.
class device_queue {
 public:
  // -- constructors ---------------------------------------------------------

  device_queue() = default;
  /// `owner` keeps the device alive where the queue does not (the device's default queue).
  explicit device_queue(detail::intrusive_ptr<detail::queue_state> state,
                        detail::intrusive_ptr<detail::device_state> owner = nullptr)
      : state_(std::move(state)), owner_(std::move(owner)) {}

  // -- properties -----------------------------------------------------------

  bool valid() const noexcept { return static_cast<bool>(state_); }
  troupe::device device() const;

  /// The queue that ends with the device command producing `result`, while it runs: work
  /// enqueued there next starts right after it, with no event wait between queues. An invalid
  /// queue when `result` is ready, comes from no device command, or more was issued after it.
  static device_queue ending_with(const shared_future<void>& result);
  const detail::intrusive_ptr<detail::queue_state>& state() const noexcept { return state_; }

  // -- buffer commands (see buffer<T> for what each does) -------------------

  template <class T>
  future<void> write(const buffer<T>& target, std::span<const T> source,
                     const dependencies& deps = {}) {
    return write(target, 0, source, deps);
  }
  template <class T>
  future<void> write(const buffer<T>& target, std::size_t offset, std::span<const T> source,
                     const dependencies& deps = {}) {
    return detail::enqueue_write(state_.get(), target.state(), offset, source.data(), source.size(),
                                 false, {}, deps);
  }
  template <class T>
  future<void> write(const buffer<T>& target, const host_buffer<T>& source,
                     const dependencies& deps = {}) {
    return write(target, 0, source, 0, source.size(), deps);
  }
  /// Writes `count` elements of pinned memory from `source_offset` to `offset`.
  template <class T>
  future<void> write(const buffer<T>& target, std::size_t offset, const host_buffer<T>& source,
                     std::size_t source_offset, std::size_t count, const dependencies& deps = {}) {
    if (source_offset > source.size() || count > source.size() - source_offset)
      return make_exceptional_future<void>(detail::check_range(
          "device_queue::write (pinned source)", source_offset, count, source.size()));
    return detail::enqueue_write(state_.get(), target.state(), offset,
                                 source.data() + source_offset, count, true, source.state(), deps);
  }

  template <class T>
  future<std::vector<T>> read(const buffer<T>& source, const dependencies& deps = {}) {
    return read(source, 0, source.size(), deps);
  }
  template <class T>
  future<std::vector<T>> read(const buffer<T>& source, std::size_t offset, std::size_t count,
                              const dependencies& deps = {}) {
    return detail::enqueue_read<T>(state_.get(), source.state(), offset, count, deps);
  }
  template <class T>
  future<void> read_into(const buffer<T>& source, std::span<T> destination,
                         const dependencies& deps = {}) {
    return detail::enqueue_read_into(state_.get(), source.state(), 0, destination.data(),
                                     destination.size(), false, {}, deps);
  }
  /// Reads `count` elements from `offset` into pinned memory at `destination_offset`.
  template <class T>
  future<void> read_into(const buffer<T>& source, std::size_t offset,
                         const host_buffer<T>& destination, std::size_t destination_offset,
                         std::size_t count, const dependencies& deps = {}) {
    if (destination_offset > destination.size() || count > destination.size() - destination_offset)
      return make_exceptional_future<void>(
          detail::check_range("device_queue::read_into (pinned destination)", destination_offset,
                              count, destination.size()));
    return detail::enqueue_read_into(state_.get(), source.state(), offset,
                                     destination.data() + destination_offset, count, true,
                                     destination.state(), deps);
  }
  template <class T>
  future<void> read_into(const buffer<T>& source, const host_buffer<T>& destination,
                         const dependencies& deps = {}) {
    return read_into(source, 0, destination, 0, destination.size(), deps);
  }

  template <class T>
  future<void> fill(const buffer<T>& target, const T& value, const dependencies& deps = {}) {
    return detail::enqueue_fill(state_.get(), target.state(), value, 0, target.size(), deps);
  }

  template <class T>
  future<void> copy(const buffer<T>& source, const buffer<T>& target,
                    const dependencies& deps = {}) {
    return detail::enqueue_copy<T>(state_.get(), source.state(), 0, target.state(), 0,
                                   source.size(), deps);
  }
  template <class T>
  future<void> copy(const buffer<T>& source, std::size_t source_offset, const buffer<T>& target,
                    std::size_t target_offset, std::size_t count, const dependencies& deps = {}) {
    return detail::enqueue_copy<T>(state_.get(), source.state(), source_offset, target.state(),
                                   target_offset, count, deps);
  }

  // -- launches -------------------------------------------------------------

  /// Runs kernel `name` of `prog` over `shape` (an nd_range or a cuda_grid) with `args`
  /// (buffers, scalars, local_memory), after `deps`. Argument count and types are checked
  /// against the kernel's; a mismatch fails the future with errc::invalid_argument.
  template <class Shape, class... Args>
  future<void> launch(const program& prog, std::string name, const Shape& shape,
                      const dependencies& deps, const Args&... args) {
    static_assert(std::is_same_v<Shape, nd_range> || std::is_same_v<Shape, cuda_grid>,
                  "launch: the third argument is an nd_range or a cuda_grid");
    static_assert((!std::is_same_v<Args, dependencies> && ...),
                  "launch: pass dependencies right after the shape, once");
    return launch_packed(prog, std::move(name), shape, detail::pack_launch_arguments(args...),
                         deps);
  }
  template <class Shape, class... Args>
  requires(!std::is_same_v<std::remove_cvref_t<Args>, dependencies> &&
           ...) future<void> launch(const program& prog, std::string name, const Shape& shape,
                                    const Args&... args) {
    return launch(prog, std::move(name), shape, dependencies{}, args...);
  }

 private:
  future<void> launch_packed(const program& prog, std::string name, const nd_range& shape,
                             std::vector<detail::launch_argument> args, const dependencies& deps);
  future<void> launch_packed(const program& prog, std::string name, const cuda_grid& shape,
                             std::vector<detail::launch_argument> args, const dependencies& deps);

  detail::intrusive_ptr<detail::queue_state> state_;
  detail::intrusive_ptr<detail::device_state> owner_;
};

}  // namespace troupe
