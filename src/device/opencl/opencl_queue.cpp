#include "device/opencl/opencl_queue.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "device/host_copier.hpp"
#include "device/opencl/opencl_kernel.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::detail {

opencl_queue::~opencl_queue() {
  // Commands may still use our memory. The frontend drops a queue only once every command on
  // it has ended, and never on a scheduler worker (queue_state's destructor).
  context_->waits.note();
  clFinish(queue_);
  clReleaseCommandQueue(queue_);
}

std::vector<cl_event> opencl_queue::handles(wait_list wait) {
  std::vector<cl_event> events;
  events.reserve(wait.size());
  for (auto* e : wait) events.push_back(static_cast<opencl_event*>(e)->handle());
  return events;
}

template <class Enqueue>
event_ptr opencl_queue::enqueue(const char* call, wait_list wait, Enqueue&& op,
                                opencl_staged_copy staged, launch_event marking) {
  const std::vector<cl_event> events = handles(wait);
  cl_event done = nullptr;
  memory_->check_enqueue(
      op(static_cast<cl_uint>(events.size()), events.empty() ? nullptr : events.data(),
         marking == launch_event::own ? &done : nullptr),
      call);
  event_ptr result;
  if (done != nullptr)
    result = event_ptr{new opencl_event(done, context_, std::move(staged)), adopt_ref};
  stage_trace::record(stage_trace::point::driver_flush);
  if (marking != launch_event::held) clFlush(queue_);
  return result;
}

event_ptr opencl_queue::write(backend_memory& dst, std::size_t offset, const void* src,
                              std::size_t bytes, bool pinned, wait_list wait) {
  if (!pinned && staged(bytes)) return staged_write(dst, offset, src, bytes, wait);
  return enqueue("clEnqueueWriteBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
    return clEnqueueWriteBuffer(queue_, mem(dst), CL_FALSE, offset, bytes, src, n, w, e);
  });
}

event_ptr opencl_queue::read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes,
                             bool pinned, intrusive_ptr<destination_gate> ready, wait_list wait) {
  if (!pinned && staged(bytes)) return staged_read(src, offset, dst, bytes, std::move(ready), wait);
  if (ready) refuse_unstaged_gate(context_->name, bytes);
  return enqueue("clEnqueueReadBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
    return clEnqueueReadBuffer(queue_, mem(src), CL_FALSE, offset, bytes, dst, n, w, e);
  });
}

event_ptr opencl_queue::fill(backend_memory& dst, std::size_t offset, std::size_t bytes,
                             const void* pattern, std::size_t pattern_size, wait_list wait) {
  return enqueue("clEnqueueFillBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
    return clEnqueueFillBuffer(queue_, mem(dst), pattern, pattern_size, offset, bytes, n, w, e);
  });
}

event_ptr opencl_queue::copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                             std::size_t dst_offset, std::size_t bytes, wait_list wait) {
  return enqueue("clEnqueueCopyBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
    return clEnqueueCopyBuffer(queue_, mem(src), mem(dst), src_offset, dst_offset, bytes, n, w, e);
  });
}

event_ptr opencl_queue::launch(backend_kernel& kernel, const launch_shape& shape,
                               std::span<const kernel_argument> args, wait_list wait,
                               launch_event marking) {
  if (shape.shared_bytes != 0)
    throw error(errc::invalid_argument,
                "launch of kernel '" + kernel.name + "' on OpenCL device '" + context_->name +
                    "': dynamic shared memory is CUDA's; pass a local_memory<T> argument");
  auto& k = static_cast<opencl_kernel&>(kernel);
  cl_kernel handle = k.take();
  struct give_back_on_exit {
    opencl_kernel& k;
    cl_kernel h;
    ~give_back_on_exit() { k.give_back(h); }
  } guard{k, handle};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    cl_int status = CL_SUCCESS;
    auto index = static_cast<cl_uint>(i);
    switch (a.what) {
      case kernel_argument::kind::memory: {
        cl_mem m = a.memory != nullptr ? static_cast<opencl_memory*>(a.memory)->mem : nullptr;
        status = clSetKernelArg(handle, index, sizeof m, &m);
        break;
      }
      case kernel_argument::kind::scalar:
        status = clSetKernelArg(handle, index, a.size, a.scalar.data());
        break;
      case kernel_argument::kind::local:
        status = clSetKernelArg(handle, index, a.size, nullptr);
        break;
    }
    if (status != CL_SUCCESS)
      throw error(errc::invalid_argument, "launch of kernel '" + kernel.name + "' on device '" +
                                              context_->name + "': argument " + std::to_string(i) +
                                              " was refused: " + opencl_error_name(status));
  }
  stage_trace::record(stage_trace::point::driver_call);
  bool has_offset = shape.offset[0] + shape.offset[1] + shape.offset[2] != 0;
  bool has_local = shape.local[0] != 0;
  return enqueue(
      "clEnqueueNDRangeKernel", wait,
      [&](cl_uint n, const cl_event* w, cl_event* e) {
        return clEnqueueNDRangeKernel(
            queue_, handle, shape.dimensions, has_offset ? shape.offset.data() : nullptr,
            shape.global.data(), has_local ? shape.local.data() : nullptr, n, w, e);
      },
      {}, marking);
}

event_ptr opencl_queue::mark() {
  try {
    return enqueue("clEnqueueMarkerWithWaitList", {},
                   [&](cl_uint n, const cl_event* w, cl_event* e) {
                     return clEnqueueMarkerWithWaitList(queue_, n, w, e);
                   });
  } catch (...) {
    context_->waits.note();
    clFinish(queue_);  // what the marker was to cover may still use its memory
    throw;
  }
}

event_ptr opencl_queue::staged_write(backend_memory& dst, std::size_t offset, const void* src,
                                     std::size_t bytes, wait_list wait) {
  opencl_staged_copy staged{staging_, staging_->take(bytes)};
  const std::vector<cl_event> events = handles(wait);
  const std::size_t chunk = staging_chunk(bytes);
  auto* block = static_cast<std::byte*>(staged.block.data);
  cl_event done = nullptr;
  for (std::size_t at = 0; at < bytes; at += chunk) {
    const std::size_t length = std::min(chunk, bytes - at);
    staging_->copy(block + at, static_cast<const std::byte*>(src) + at, length);
    const bool first = at == 0;
    const bool last = at + length == bytes;
    const cl_int status = clEnqueueWriteBuffer(
        queue_, mem(dst), CL_FALSE, offset + at, length, block + at,
        first ? static_cast<cl_uint>(events.size()) : 0,
        first && !events.empty() ? events.data() : nullptr, last ? &done : nullptr);
    if (status != CL_SUCCESS) {
      context_->waits.note();
      clFinish(queue_);  // chunks enqueued before still read the block
      staging_->give_back(staged.block);
      memory_->check_enqueue(status, "clEnqueueWriteBuffer");
    }
    clFlush(queue_);
  }
  return event_ptr{new opencl_event(done, context_, std::move(staged)), adopt_ref};
}

event_ptr opencl_queue::staged_read(backend_memory& src, std::size_t offset, void* dst,
                                    std::size_t bytes, intrusive_ptr<destination_gate> ready,
                                    wait_list wait) {
  const std::vector<cl_event> events = handles(wait);
  opencl_staged_copy staged{staging_, staging_->take(bytes), dst, bytes, std::move(ready)};
  staged.chunk_bytes = staging_chunk(bytes);
  auto* block = static_cast<std::byte*>(staged.block.data);
  cl_event done = nullptr;  // the last chunk's event: the command's own
  for (std::size_t at = 0; at < bytes; at += staged.chunk_bytes) {
    const std::size_t length = std::min(staged.chunk_bytes, bytes - at);
    const bool first = at == 0;
    cl_event arrived = nullptr;
    const cl_int status =
        clEnqueueReadBuffer(queue_, mem(src), CL_FALSE, offset + at, length, block + at,
                            first ? static_cast<cl_uint>(events.size()) : 0,
                            first && !events.empty() ? events.data() : nullptr, &arrived);
    if (status != CL_SUCCESS) {
      give_back_after_failure(staged);
      memory_->check_enqueue(status, "clEnqueueReadBuffer");
    }
    if (at + length == bytes) {
      done = arrived;
      break;
    }
    try {
      staged.chunk_events.push_back(arrived);
    } catch (...) {
      clReleaseEvent(arrived);
      give_back_after_failure(staged);
      throw;
    }
  }
  stage_trace::record(stage_trace::point::driver_flush);
  clFlush(queue_);
  return event_ptr{new opencl_event(done, context_, std::move(staged)), adopt_ref};
}

void opencl_queue::give_back_after_failure(opencl_staged_copy& staged) noexcept {
  context_->waits.note();
  clFinish(queue_);
  for (cl_event chunk : staged.chunk_events) clReleaseEvent(chunk);
  staging_->give_back(staged.block);
}

}  // namespace troupe::detail
