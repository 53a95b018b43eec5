#include "device/cuda/cuda_event.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "troupe/support/stage_trace.hpp"

namespace troupe::detail {
namespace {

/// Runs on a driver thread once the stream reaches the callback, also after a failure. `done`
/// is destroyed here too, so it should not own the last reference to a backend object: a
/// destructor's driver calls fail with CUDA_ERROR_NOT_PERMITTED inside a stream callback, and
/// what they would release leaks.
void CUDA_CB call_done(CUstream /*stream*/, CUresult /*status*/, void* data) noexcept {
  const std::unique_ptr<std::function<void()>> done{static_cast<std::function<void()>*>(data)};
  (*done)();
}

}  // namespace

cuda_stream::cuda_stream(std::shared_ptr<cuda_context> owner) : context(std::move(owner)) {
  context->make_current();
  context->check(context->driver().cuStreamCreate(&handle, CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate");
}

cuda_stream::~cuda_stream() {
  // Returns at once; the driver releases the stream when its work is done.
  context->make_current_quietly();
  context->driver().cuStreamDestroy(handle);
}

event_pool::~event_pool() {
  context->make_current_quietly();
  for (CUevent event : free_) context->driver().cuEventDestroy(event);
}

CUevent event_pool::take() {
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      CUevent event = free_.back();
      free_.pop_back();
      return event;
    }
  }
  context->make_current();
  CUevent event = nullptr;
  context->check(context->driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  return event;
}

void event_pool::give_back(CUevent event) noexcept {
  {
    std::lock_guard lock(mutex_);
    try {
      free_.push_back(event);
      return;
    } catch (...) {  // out of memory: destroy the event instead
    }
  }
  context->make_current_quietly();
  context->driver().cuEventDestroy(event);
}

cuda_event::cuda_event(std::shared_ptr<event_pool> pool, std::shared_ptr<cuda_stream> stream,
                       staged_transfer staged)
    : pool_(std::move(pool)), stream_(std::move(stream)), staged_(std::move(staged)) {
  try {
    handle_ = pool_->take();
  } catch (...) {
    // Nothing was enqueued yet, so the block is unused.
    release_staging();
    throw;
  }
}

void cuda_event::release_staging() noexcept {
  for (CUevent chunk : staged_.chunk_events) pool_->give_back(chunk);
  staged_.chunk_events.clear();
  if (staged_.block.data) staged_.pool->give_back(staged_.block);
  staged_.block = {};
}

cuda_event::~cuda_event() {
  const cuda_context& context = *pool_->context;
  if (staged_.block.data) {
    // Dropped before finish(), after an error or by an abandoned command: the device may still
    // copy through the block, so wait for it before anyone reuses the block. The completion
    // queue holds every recorded event until its command has ended, so that wait returns at
    // once wherever it runs; an event never recorded is dropped by the thread whose enqueue
    // failed, after a driver error that has usually stopped the stream already.
    context.make_current_quietly();
    if (recorded_) {
      context.waits.note(context.driver().cuEventQuery(handle_) != CUDA_ERROR_NOT_READY);
      context.driver().cuEventSynchronize(handle_);
    } else {
      context.waits.note();
      context.driver().cuStreamSynchronize(stream_->handle);
    }
  }
  release_staging();
  pool_->give_back(handle_);
}

void cuda_event::copy_arrived_chunks() {
  const cuda_context& context = *pool_->context;
  auto& s = staged_;
  while (s.chunks_copied < s.chunk_events.size()) {
    const std::size_t at = s.chunks_copied * s.chunk_bytes;
    const std::size_t length = std::min(s.chunk_bytes, s.read_bytes - at);
    // Never waits here: a destination still being prepared is caught up with in finish().
    if (s.read_ready && s.read_ready->ready() < at + length) return;
    const CUresult result = context.driver().cuEventQuery(s.chunk_events[s.chunks_copied]);
    if (result == CUDA_ERROR_NOT_READY) return;
    if (result != CUDA_SUCCESS) context.fail(result, "cuEventQuery");
    stage_trace::record(stage_trace::point::chunk_arrived);
    s.pool->copy(static_cast<std::byte*>(s.read_destination) + at,
                 static_cast<const std::byte*>(s.block.data) + at, length);
    stage_trace::record(stage_trace::point::chunk_copied);
    ++s.chunks_copied;
  }
}

bool cuda_event::query() {
  const cuda_context& context = *pool_->context;
  context.make_current();
  if (!staged_.chunk_events.empty()) copy_arrived_chunks();
  const CUresult result = context.driver().cuEventQuery(handle_);
  if (result == CUDA_SUCCESS) return true;
  if (result == CUDA_ERROR_NOT_READY) return false;
  context.fail(result, "cuEventQuery");
}

bool cuda_event::done_quietly() const noexcept {
  return recorded_ && pool_->context->driver().cuEventQuery(handle_) == CUDA_SUCCESS;
}

void cuda_event::notify(std::function<void()> done) {
  const cuda_context& context = *pool_->context;
  context.make_current();
  auto callback = std::make_unique<std::function<void()>>(std::move(done));
  // cuStreamAddCallback, not cuLaunchHostFunc: a host function is skipped once the context has
  // failed, and then `done` would never run; a stream callback runs exactly once either way.
  context.check(
      context.driver().cuStreamAddCallback(stream_->handle, &call_done, callback.get(), 0),
      "cuStreamAddCallback");
  callback.release();  // call_done deletes it
}

void cuda_event::finish() {
  if (!staged_.block.data) return;
  if (staged_.read_destination) {
    // What query() has not copied yet (all of it for an unchunked read).
    const std::size_t done =
        std::min(staged_.chunks_copied * staged_.chunk_bytes, staged_.read_bytes);
    staged_.pool->copy_when_ready(staged_.read_destination, staged_.block.data, done,
                                  staged_.read_bytes, staged_.read_ready.get());
  }
  release_staging();
}

void cuda_event::record() {
  const cuda_context& context = *pool_->context;
  context.check(context.driver().cuEventRecord(handle_, stream_->handle), "cuEventRecord");
  recorded_ = true;
}

}  // namespace troupe::detail
