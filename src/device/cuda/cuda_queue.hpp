#pragma once

// A CUDA stream as a backend_queue.

#include <memory>
#include <utility>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/cuda_event.hpp"
#include "device/cuda/cuda_pinned_allocator.hpp"

namespace troupe::detail {

class cuda_queue final : public backend_queue {
 public:
  /// Creates the stream; throws troupe::error.
  cuda_queue(std::shared_ptr<cuda_context> context, std::shared_ptr<event_pool> events,
             std::shared_ptr<cuda_staging> staging, const cuda_limits& limits);

  event_ptr write(backend_memory& dst, std::size_t offset, const void* src, std::size_t bytes,
                  bool pinned, wait_list wait) override;
  event_ptr read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes, bool pinned,
                 intrusive_ptr<destination_gate> ready, wait_list wait) override;
  /// Every read into pageable memory is staged.
  bool stages_reads_of(std::size_t bytes) const noexcept override { return bytes != 0; }
  event_ptr fill(backend_memory& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                 std::size_t pattern_size, wait_list wait) override;
  event_ptr copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                 std::size_t dst_offset, std::size_t bytes, wait_list wait) override;
  event_ptr launch(backend_kernel& kernel, const launch_shape& shape,
                   std::span<const kernel_argument> args, wait_list wait,
                   launch_event marking) override;
  event_ptr mark() override;
  /// A launch reaches the device at once: there is nothing to hand over.
  void flush() override {}

  /// Every command but a launch without an event goes through here: the stream waits for `wait`,
  /// `commands(stream)` enqueues the work, and an event recorded after it is returned. `staged`
  /// rides on the event until the work is done. A command that is not a copy from the host, or that
  /// waits on another stream, is remembered (see pageable_ok).
  template <class Commands>
  event_ptr enqueue(wait_list wait, staged_transfer staged, Commands&& commands,
                    bool from_host = false) {
    auto event = make_counted<cuda_event>(events_, stream_, std::move(staged));
    context_->make_current();
    wait_for(wait);
    std::forward<Commands>(commands)(stream_->handle);
    event->record();
    // A copy that waits on another stream is device work too: what follows queues behind it.
    // An event after device work without one of its own ends no sooner than that work.
    if (!from_host || !wait.empty() || unmarked_device_work_) {
      last_device_work_ = event;
      unmarked_device_work_ = false;
    }
    return event;
  }

  const cuda_context& context() const noexcept { return *context_; }

 private:
  void wait_for(wait_list wait);
  /// Repeats the pattern by copying it from a pinned block, then doubling what the device
  /// holds with device-to-device copies.
  event_ptr fill_by_doubling(CUdeviceptr address, std::size_t bytes, const void* pattern,
                             std::size_t pattern_size, wait_list wait);

  /// Whether a write from pageable memory may go to the driver directly: with nothing but
  /// copies from the host ahead of it on the stream and nothing to wait for, its DMA starts at
  /// once, and cuMemcpyHtoDAsync returns as soon as the driver has staged the data, as our own
  /// staging would. Behind a kernel it could block this thread until the kernel ends.
  bool pageable_ok(wait_list wait, std::size_t bytes) const;

  /// Above this, our staging's copy on several threads beats the driver's own staging.
  static constexpr std::size_t largest_pageable_write = std::size_t{16} << 20;

  std::shared_ptr<cuda_context> context_;
  std::shared_ptr<event_pool> events_;
  std::shared_ptr<cuda_staging> staging_;
  std::shared_ptr<cuda_stream> stream_;
  cuda_limits limits_;
  intrusive_ptr<cuda_event> last_device_work_;  ///< the last command not a copy from the host
  bool unmarked_device_work_ = false;           ///< a launch without an event came after it
};

}  // namespace troupe::detail
