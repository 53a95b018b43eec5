#pragma once

// An in-order OpenCL command queue as a backend_queue.

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_context.hpp"
#include "device/opencl/opencl_event.hpp"
#include "device/opencl/opencl_memory.hpp"
#include "device/opencl/opencl_pinned_allocator.hpp"

namespace troupe::detail {

/// An in-order cl_command_queue; a GPU's pageable copies go through pinned blocks, in chunks.
class opencl_queue final : public backend_queue {
 public:
  /// `staging`: where pageable copies go through, or null to hand them to the driver.
  /// `one_launching_thread`: see prefers_one_launching_thread(). `blocking_reads`: see
  /// may_block_in().
  opencl_queue(cl_command_queue queue, context_ptr context,
               std::shared_ptr<opencl_memory_cache> memory, std::shared_ptr<opencl_staging> staging,
               bool one_launching_thread, bool blocking_reads)
      : queue_(queue),
        context_(std::move(context)),
        memory_(std::move(memory)),
        staging_(std::move(staging)),
        one_launching_thread_(one_launching_thread),
        blocking_reads_(blocking_reads) {}
  ~opencl_queue() override;

  event_ptr write(backend_memory& dst, std::size_t offset, const void* src, std::size_t bytes,
                  bool pinned, wait_list wait) override;
  event_ptr read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes, bool pinned,
                 intrusive_ptr<destination_gate> ready, wait_list wait) override;

  bool stages_reads_of(std::size_t bytes) const noexcept override { return staged(bytes); }
  /// Measured on NVIDIA's OpenCL; on others, one thread costs little. TROUPE_OPENCL_LAUNCHING
  /// turns it off, so that tests on PoCL also run the rule of a backend without the preference.
  bool prefers_one_launching_thread() const noexcept override { return one_launching_thread_; }
  /// Reads, on NVIDIA's platform (see discover_opencl). TROUPE_OPENCL_READING sets it for every
  /// platform, so that tests on PoCL run the copy thread too.
  bool may_block_in(command::kind what) const noexcept override {
    return blocking_reads_ && what == command::kind::read;
  }

  event_ptr fill(backend_memory& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                 std::size_t pattern_size, wait_list wait) override;
  event_ptr copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                 std::size_t dst_offset, std::size_t bytes, wait_list wait) override;
  event_ptr launch(backend_kernel& kernel, const launch_shape& shape,
                   std::span<const kernel_argument> args, wait_list wait,
                   launch_event marking) override;

  void flush() override { clFlush(queue_); }

  event_ptr mark() override;

 private:
  /// Smaller copies go to the driver: its pinning costs little for them.
  static constexpr std::size_t staged_from = std::size_t{256} << 10;
  /// So do larger ones: their blocks would crowd out the pool's 2 GiB, and a fresh block costs
  /// more to pin than the driver's pinning of the copy (a 12000 x 12000 request took 3.0 s
  /// staged through new blocks, 2.1 s not, when the pool kept 1 GiB of power-of-two blocks).
  static constexpr std::size_t staged_up_to = std::size_t{1} << 30;

  bool staged(std::size_t bytes) const noexcept {
    return staging_ && bytes >= staged_from && bytes <= staged_up_to;
  }

  static cl_mem mem(backend_memory& m) { return static_cast<opencl_memory&>(m).mem; }

  static std::vector<cl_event> handles(wait_list wait);

  /// `op(count, wait_events, event)` enqueues one command; its event is returned, or none with
  /// launch_event::none.
  template <class Enqueue>
  event_ptr enqueue(const char* call, wait_list wait, Enqueue&& op, opencl_staged_copy staged = {},
                    launch_event marking = launch_event::own);

  /// Copies `src` into a pinned block in chunks, each written to the device while the next is
  /// copied; the source may be reused once this returns.
  event_ptr staged_write(backend_memory& dst, std::size_t offset, const void* src,
                         std::size_t bytes, wait_list wait);

  /// Reads into a pinned block in chunks; the event copies each out to `dst` as it arrives
  /// (query()), and the rest in finish().
  event_ptr staged_read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes,
                        intrusive_ptr<destination_gate> ready, wait_list wait);

  /// After a chunk could not be enqueued: those enqueued before still use the block.
  void give_back_after_failure(opencl_staged_copy& staged) noexcept;

  cl_command_queue queue_;
  context_ptr context_;
  std::shared_ptr<opencl_memory_cache> memory_;  // told when the device is out of memory
  std::shared_ptr<opencl_staging> staging_;
  bool one_launching_thread_;
  bool blocking_reads_;
};

}  // namespace troupe::detail
