#pragma once

// CUDA streams, and the pooled events that mark the end of each command enqueued on them.

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/cuda_pinned_allocator.hpp"

namespace troupe::detail {

/// A CUDA stream, kept alive by its queue and by every event recorded on it: notify() enqueues on
/// the stream, and a wait compares streams, so neither may meet a destroyed (or reused) one.
class cuda_stream {
 public:
  /// cuStreamCreate(CU_STREAM_NON_BLOCKING); throws troupe::error.
  explicit cuda_stream(std::shared_ptr<cuda_context> owner);
  ~cuda_stream();
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;

  const std::shared_ptr<cuda_context> context;
  CUstream handle = nullptr;
};

/// CUevents without timing, reused: creating and destroying one per command would cost two more
/// driver calls each.
class event_pool {
 public:
  explicit event_pool(std::shared_ptr<cuda_context> owner) : context(std::move(owner)) {}
  ~event_pool();
  event_pool(const event_pool&) = delete;
  event_pool& operator=(const event_pool&) = delete;

  /// Throws troupe::error.
  CUevent take();
  void give_back(CUevent event) noexcept;

  const std::shared_ptr<cuda_context> context;

 private:
  std::mutex mutex_;
  std::vector<CUevent> free_;
};

/// Host work that completes a command staged through pinned memory: finish() copies a read out
/// to its destination, then gives the block back to its pool.
struct staged_transfer {
  std::shared_ptr<cuda_staging> pool;
  cuda_staging_block block;
  void* read_destination = nullptr;
  std::size_t read_bytes = 0;
  intrusive_ptr<destination_gate> read_ready{};  // how far read_destination may be written yet
  /// A large read arrives in chunks, each with its event, so that query() copies finished
  /// chunks out while later ones are still in flight.
  std::vector<CUevent> chunk_events;
  std::size_t chunk_bytes = 0;
  std::size_t chunks_copied = 0;
};

class cuda_event final : public backend_event {
 public:
  /// Takes a CUevent from `pool`; record() records it. Throws troupe::error.
  cuda_event(std::shared_ptr<event_pool> pool, std::shared_ptr<cuda_stream> stream,
             staged_transfer staged);
  ~cuda_event() override;

  const void* domain() const noexcept override { return pool_->context->platform.get(); }
  bool query() override;
  void notify(std::function<void()> done) override;
  void finish() override;

  /// cuEventRecord on the stream, after the command's work; throws troupe::error.
  void record();
  /// Whether the command is done, without finishing anything (query() copies staged reads out,
  /// which is the completion thread's work). A failed command counts as not done.
  bool done_quietly() const noexcept;

  CUevent handle() const noexcept { return handle_; }
  const cuda_stream& stream() const noexcept { return *stream_; }

 private:
  std::shared_ptr<event_pool> pool_;
  std::shared_ptr<cuda_stream> stream_;
  /// Copies out the chunks of a staged read that have arrived.
  void copy_arrived_chunks();
  void release_staging() noexcept;

  CUevent handle_ = nullptr;
  staged_transfer staged_;
  bool recorded_ = false;
};

}  // namespace troupe::detail
