#pragma once

// The event of an OpenCL command, and the staged copy that rides on it until the command ends.

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_context.hpp"
#include "device/opencl/opencl_pinned_allocator.hpp"

namespace troupe::detail {

/// A copy staged through a pinned block: the block, and for a read where its data goes.
struct opencl_staged_copy {
  std::shared_ptr<opencl_staging> pool;
  opencl_staging_block block;
  void* read_destination = nullptr;
  std::size_t read_bytes = 0;
  intrusive_ptr<destination_gate> read_ready{};  // how far read_destination may be written yet
  /// A read of several chunks: the events of all chunks but the last (the command's own), so
  /// that query() copies arrived chunks out while later ones are still in flight.
  std::vector<cl_event> chunk_events{};
  std::size_t chunk_bytes = 0;
  std::size_t chunks_copied = 0;
};

/// The end of one OpenCL command: its cl_event, polled or called back, and the pinned block of
/// a staged copy, whose read is copied out as it arrives.
class opencl_event final : public backend_event {
 public:
  opencl_event(cl_event event, context_ptr context, opencl_staged_copy staged = {})
      : event_(event), context_(std::move(context)), staged_(std::move(staged)) {}
  ~opencl_event() override;

  const void* domain() const noexcept override { return context_->context; }
  cl_event handle() const noexcept { return event_; }

  bool query() override;

  /// A staged read's data (what query() has not copied yet) goes to its destination; the block
  /// goes back to its pool.
  void finish() override;

  /// Whether `event` has completed; throws troupe::error if its command failed.
  bool complete(cl_event event) const;
  /// Whether the command has completed or failed; never throws.
  bool ended() const noexcept;

  /// Copies out the chunks of a staged read that have arrived, in order.
  void copy_arrived_chunks();

  void notify(std::function<void()> done) override;

 private:
  cl_event event_;
  context_ptr context_;
  opencl_staged_copy staged_;
};

}  // namespace troupe::detail
