#pragma once

// A CUDA stream as a backend_queue.

#include <memory>
#include <utility>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/cuda_event.hpp"
#include "device/cuda/cuda_staging.hpp"

namespace troupe::detail {

class cuda_queue final : public backend_queue {
 public:
  /// Creates the stream; throws troupe::error.
  cuda_queue(std::shared_ptr<cuda_context> context, std::shared_ptr<event_pool> events,
             std::shared_ptr<staging_pool> staging, const cuda_limits& limits);

  event_ptr write(backend_memory& dst, std::size_t offset, const void* src, std::size_t bytes,
                  bool pinned, wait_list wait) override;
  event_ptr read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes, bool pinned,
                 wait_list wait) override;
  event_ptr fill(backend_memory& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                 std::size_t pattern_size, wait_list wait) override;
  event_ptr copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                 std::size_t dst_offset, std::size_t bytes, wait_list wait) override;
  event_ptr launch(backend_kernel& kernel, const launch_shape& shape,
                   std::span<const kernel_argument> args, wait_list wait) override;

  /// Every command goes through here: the stream waits for `wait`, `commands(stream)` enqueues
  /// the work, and an event recorded after it is returned. `staged` rides on the event until the
  /// work is done.
  template <class Commands>
  event_ptr enqueue(wait_list wait, staged_transfer staged, Commands&& commands) {
    auto event = make_counted<cuda_event>(events_, stream_, std::move(staged));
    context_->make_current();
    wait_for(wait);
    std::forward<Commands>(commands)(stream_->handle);
    event->record();
    return event;
  }

  const cuda_context& context() const noexcept { return *context_; }

 private:
  void wait_for(wait_list wait);
  /// Repeats the pattern by copying it from a pinned block, then doubling what the device
  /// holds with device-to-device copies.
  event_ptr fill_by_doubling(CUdeviceptr address, std::size_t bytes, const void* pattern,
                             std::size_t pattern_size, wait_list wait);

  /// Staged copies move in pieces of this size, so that host copying and DMA overlap.
  static constexpr std::size_t staging_chunk = std::size_t{8} << 20;

  std::shared_ptr<cuda_context> context_;
  std::shared_ptr<event_pool> events_;
  std::shared_ptr<staging_pool> staging_;
  std::shared_ptr<cuda_stream> stream_;
  cuda_limits limits_;
};

}  // namespace troupe::detail
