#include "device/opencl/opencl_event.hpp"

#include <string>

#include "troupe/support/stage_trace.hpp"

namespace troupe::detail {

opencl_event::~opencl_event() {
  if (staged_.pool) {
    // Dropped before finish(), after an error: the device may still copy through the block.
    // The completion queue holds every event until its command has ended, so this returns at
    // once wherever it runs.
    context_->waits.note(ended());
    clWaitForEvents(1, &event_);
    staged_.pool->give_back(staged_.block);
  }
  for (cl_event chunk : staged_.chunk_events) clReleaseEvent(chunk);
  clReleaseEvent(event_);
}

bool opencl_event::query() {
  if (staged_.chunks_copied < staged_.chunk_events.size()) copy_arrived_chunks();
  return complete(event_);
}

void opencl_event::finish() {
  if (!staged_.pool) return;
  if (staged_.read_destination != nullptr)
    staged_.pool->copy_when_ready(staged_.read_destination, staged_.block.data,
                                  staged_.chunks_copied * staged_.chunk_bytes, staged_.read_bytes,
                                  staged_.read_ready.get());
  staged_.pool->give_back(staged_.block);
  staged_.pool.reset();
}

bool opencl_event::ended() const noexcept {
  cl_int status = CL_QUEUED;
  return clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                        nullptr) != CL_SUCCESS ||
         status <= CL_COMPLETE;  // complete, or failed
}

bool opencl_event::complete(cl_event event) const {
  cl_int status = CL_QUEUED;
  check_opencl(
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
      "clGetEventInfo", context_->name);
  if (status < 0)  // out of memory too: an implementation may allocate at first use
    throw error(opencl_error_kind(status), "OpenCL command on device '" + context_->name +
                                               "' failed: " + opencl_error_name(status));
  return status == CL_COMPLETE;
}

void opencl_event::copy_arrived_chunks() {
  auto& s = staged_;
  for (; s.chunks_copied < s.chunk_events.size(); ++s.chunks_copied) {
    const std::size_t at = s.chunks_copied * s.chunk_bytes;
    // Never waits here: a destination still being prepared is caught up with in finish().
    if (s.read_ready && s.read_ready->ready() < at + s.chunk_bytes) return;
    if (!complete(s.chunk_events[s.chunks_copied])) return;
    stage_trace::record(stage_trace::point::chunk_arrived);
    s.pool->copy(static_cast<std::byte*>(s.read_destination) + at,
                 static_cast<const std::byte*>(s.block.data) + at, s.chunk_bytes);
    stage_trace::record(stage_trace::point::chunk_copied);
  }
}

void opencl_event::notify(std::function<void()> done) {
  auto* heap = new std::function<void()>(std::move(done));
  auto call = [](cl_event, cl_int, void* user) {
    auto* f = static_cast<std::function<void()>*>(user);
    (*f)();
    delete f;
  };
  if (clSetEventCallback(event_, CL_COMPLETE, call, heap) != CL_SUCCESS) {
    // Cannot happen for a valid event; call back at once so the poll pass finds it.
    (*heap)();
    delete heap;
  }
}

}  // namespace troupe::detail
