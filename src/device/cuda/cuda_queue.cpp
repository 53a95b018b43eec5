#include "device/cuda/cuda_queue.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "device/cuda/cuda_launch.hpp"
#include "device/cuda/cuda_memory.hpp"
#include "device/cuda/cuda_program.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::detail {
namespace {

[[noreturn]] void reject(const cuda_context& context, const std::string& message) {
  throw error(errc::invalid_argument, "CUDA queue on device '" + context.name + "': " + message);
}

staged_transfer staged_through(std::shared_ptr<cuda_staging> pool, cuda_staging_block block) {
  staged_transfer staged;
  staged.pool = std::move(pool);
  staged.block = block;
  return staged;
}

}  // namespace

cuda_queue::cuda_queue(std::shared_ptr<cuda_context> context, std::shared_ptr<event_pool> events,
                       std::shared_ptr<cuda_staging> staging, const cuda_limits& limits)
    : context_(std::move(context)),
      events_(std::move(events)),
      staging_(std::move(staging)),
      stream_(std::make_shared<cuda_stream>(context_)),
      limits_(limits) {}

void cuda_queue::wait_for(wait_list wait) {
  const void* domain = context_->platform.get();
  for (backend_event* waited : wait) {
    if (!waited) continue;
    if (waited->domain() != domain) {
      reject(*context_, "cannot wait on the device for an event of another backend");
    }
    const auto& event = static_cast<const cuda_event&>(*waited);
    if (&event.stream() == stream_.get()) continue;  // the stream runs in order anyway
    context_->check(context_->driver().cuStreamWaitEvent(stream_->handle, event.handle(), 0),
                    "cuStreamWaitEvent");
  }
}

bool cuda_queue::pageable_ok(wait_list wait, std::size_t bytes) const {
  if (bytes > largest_pageable_write) return false;
  context_->make_current();
  if (unmarked_device_work_) return false;
  if (last_device_work_ && !last_device_work_->done_quietly()) return false;
  for (backend_event* waited : wait) {
    if (!waited || waited->domain() != context_->platform.get()) continue;  // wait_for rejects
    const auto& event = static_cast<const cuda_event&>(*waited);
    if (&event.stream() != stream_.get() && !event.done_quietly()) return false;
  }
  return true;
}

event_ptr cuda_queue::write(backend_memory& dst, std::size_t offset, const void* src,
                            std::size_t bytes, bool pinned, wait_list wait) {
  const cuda_driver& driver = context_->driver();
  const CUdeviceptr address = device_address(dst) + offset;
  if (pinned || bytes == 0) {
    return enqueue(
        wait, {},
        [&](CUstream stream) {
          if (bytes == 0) return;
          context_->check(driver.cuMemcpyHtoDAsync(address, src, bytes, stream),
                          "cuMemcpyHtoDAsync");
        },
        true);
  }
  if (pageable_ok(wait, bytes)) {
    // The driver stages it, pipelined, before returning: the caller may reuse `src` at once.
    return enqueue(
        wait, {},
        [&](CUstream stream) {
          context_->check(driver.cuMemcpyHtoDAsync(address, src, bytes, stream),
                          "cuMemcpyHtoDAsync");
        },
        true);
  }
  // The source is copied now, so the caller may reuse it as soon as this returns. In chunks: the
  // device copies one chunk while this thread copies the next into the block.
  const cuda_staging_block block = staging_->take(bytes);
  const std::size_t chunk = staging_chunk(bytes);
  return enqueue(
      wait, staged_through(staging_, block),
      [&](CUstream stream) {
        for (std::size_t at = 0; at < bytes; at += chunk) {
          const std::size_t length = std::min(chunk, bytes - at);
          auto* staged = static_cast<std::byte*>(block.data) + at;
          staging_->copy(staged, static_cast<const std::byte*>(src) + at, length);
          context_->check(driver.cuMemcpyHtoDAsync(address + at, staged, length, stream),
                          "cuMemcpyHtoDAsync");
        }
      },
      true);
}

event_ptr cuda_queue::read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes,
                           bool pinned, intrusive_ptr<destination_gate> ready, wait_list wait) {
  const cuda_driver& driver = context_->driver();
  const CUdeviceptr address = device_address(src) + offset;
  if (pinned || bytes == 0) {
    if (ready) refuse_unstaged_gate(context_->name, bytes);
    return enqueue(wait, {}, [&](CUstream stream) {
      if (bytes == 0) return;
      context_->check(driver.cuMemcpyDtoHAsync(dst, address, bytes, stream), "cuMemcpyDtoHAsync");
    });
  }
  // The event copies the block out to `dst`: chunk by chunk as they arrive (query()), and the
  // rest in finish().
  staged_transfer staged = staged_through(staging_, staging_->take(bytes));
  staged.read_destination = dst;
  staged.read_bytes = bytes;
  staged.read_ready = std::move(ready);
  const std::size_t chunk = staging_chunk(bytes);
  staged.chunk_bytes = chunk;
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  if (chunks > 1) {
    try {
      for (std::size_t i = 0; i < chunks; ++i) staged.chunk_events.push_back(events_->take());
    } catch (...) {
      for (CUevent taken : staged.chunk_events) events_->give_back(taken);
      staging_->give_back(staged.block);
      throw;
    }
  }
  const std::vector<CUevent> chunk_events = staged.chunk_events;
  auto* block = static_cast<std::byte*>(staged.block.data);
  return enqueue(wait, std::move(staged), [&](CUstream stream) {
    for (std::size_t i = 0, at = 0; at < bytes; ++i, at += chunk) {
      const std::size_t length = std::min(chunk, bytes - at);
      context_->check(driver.cuMemcpyDtoHAsync(block + at, address + at, length, stream),
                      "cuMemcpyDtoHAsync");
      if (!chunk_events.empty())
        context_->check(driver.cuEventRecord(chunk_events[i], stream), "cuEventRecord");
    }
  });
}

event_ptr cuda_queue::fill(backend_memory& dst, std::size_t offset, std::size_t bytes,
                           const void* pattern, std::size_t pattern_size, wait_list wait) {
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8 &&
      pattern_size != 16) {
    reject(*context_,
           "a fill pattern has 1, 2, 4, 8 or 16 bytes, not " + std::to_string(pattern_size));
  }
  if (bytes % pattern_size != 0) {
    reject(*context_, "a fill of " + std::to_string(bytes) + " bytes is no whole number of " +
                          std::to_string(pattern_size) + "-byte patterns");
  }
  const cuda_driver& driver = context_->driver();
  const CUdeviceptr address = device_address(dst) + offset;
  const std::size_t count = bytes / pattern_size;
  if (bytes == 0) return enqueue(wait, {}, [](CUstream) {});
  // cuMemsetD16/D32 need an address aligned to their element size.
  if (pattern_size == 1) {
    unsigned char value = 0;
    std::memcpy(&value, pattern, sizeof value);
    return enqueue(wait, {}, [&](CUstream stream) {
      context_->check(driver.cuMemsetD8Async(address, value, count, stream), "cuMemsetD8Async");
    });
  }
  if (pattern_size == 2 && address % 2 == 0) {
    unsigned short value = 0;
    std::memcpy(&value, pattern, sizeof value);
    return enqueue(wait, {}, [&](CUstream stream) {
      context_->check(driver.cuMemsetD16Async(address, value, count, stream), "cuMemsetD16Async");
    });
  }
  if (pattern_size == 4 && address % 4 == 0) {
    unsigned int value = 0;
    std::memcpy(&value, pattern, sizeof value);
    return enqueue(wait, {}, [&](CUstream stream) {
      context_->check(driver.cuMemsetD32Async(address, value, count, stream), "cuMemsetD32Async");
    });
  }
  return fill_by_doubling(address, bytes, pattern, pattern_size, wait);
}

event_ptr cuda_queue::fill_by_doubling(CUdeviceptr address, std::size_t bytes, const void* pattern,
                                       std::size_t pattern_size, wait_list wait) {
  const cuda_driver& driver = context_->driver();
  // A whole pinned block of repeats saves the first dozen tiny doubling copies. The smallest
  // block is a multiple of every pattern size, and so is `bytes`.
  const std::size_t seed_bytes = std::min(bytes, cuda_staging::sizes.smallest_block);
  const cuda_staging_block block = staging_->take(seed_bytes);
  auto* seed = static_cast<std::byte*>(block.data);
  for (std::size_t at = 0; at < seed_bytes; at += pattern_size) {
    std::memcpy(seed + at, pattern, pattern_size);
  }
  return enqueue(wait, staged_through(staging_, block), [&](CUstream stream) {
    context_->check(driver.cuMemcpyHtoDAsync(address, block.data, seed_bytes, stream),
                    "cuMemcpyHtoDAsync");
    for (std::size_t filled = seed_bytes; filled < bytes;) {
      const std::size_t chunk = std::min(filled, bytes - filled);
      context_->check(driver.cuMemcpyDtoDAsync(address + filled, address, chunk, stream),
                      "cuMemcpyDtoDAsync");
      filled += chunk;
    }
  });
}

event_ptr cuda_queue::copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                           std::size_t dst_offset, std::size_t bytes, wait_list wait) {
  const cuda_driver& driver = context_->driver();
  const CUdeviceptr from = device_address(src) + src_offset;
  const CUdeviceptr to = device_address(dst) + dst_offset;
  return enqueue(wait, {}, [&](CUstream stream) {
    if (bytes == 0) return;
    context_->check(driver.cuMemcpyDtoDAsync(to, from, bytes, stream), "cuMemcpyDtoDAsync");
  });
}

event_ptr cuda_queue::launch(backend_kernel& kernel, const launch_shape& shape,
                             std::span<const kernel_argument> args, wait_list wait,
                             launch_event marking) {
  auto& cuda = static_cast<cuda_kernel&>(kernel);
  const cuda_geometry geometry = launch_geometry(shape, limits_, context_->name);
  if (cuda.params_known && args.size() != cuda.params.size()) {
    reject(*context_, "kernel '" + cuda.name + "' takes " + std::to_string(cuda.params.size()) +
                          " arguments, not " + std::to_string(args.size()));
  }
  // cuLaunchKernel takes a pointer to each argument's value; a buffer's value is its address.
  launch_list<CUdeviceptr> addresses(args.size());
  launch_list<void*> values(args.size());
  for (std::size_t index = 0; index < args.size(); ++index) {
    const kernel_argument& argument = args[index];
    switch (argument.what) {
      case kernel_argument::kind::memory:
        if (!argument.memory) {
          reject(*context_, "argument " + std::to_string(index) + " of kernel '" + cuda.name +
                                "' is a buffer argument without a buffer");
        }
        addresses[index] = device_address(*argument.memory);
        values[index] = &addresses[index];
        break;
      case kernel_argument::kind::scalar:
        values[index] = const_cast<std::byte*>(argument.scalar.data());
        break;
      case kernel_argument::kind::local:
        throw error(errc::invalid_argument,
                    "local-memory arguments are OpenCL's; on CUDA use cuda_grid::shared_bytes");
    }
  }
  const cuda_driver& driver = context_->driver();
  auto enqueue_kernel = [&](CUstream stream) {
    if (geometry.empty) return;
    cuda.allow_shared_bytes(shape.shared_bytes);
    stage_trace::record(stage_trace::point::driver_call);
    const CUresult result = driver.cuLaunchKernel(
        cuda.function(), geometry.grid[0], geometry.grid[1], geometry.grid[2], geometry.block[0],
        geometry.block[1], geometry.block[2], static_cast<unsigned>(shape.shared_bytes), stream,
        values.data(), nullptr);
    if (result != CUDA_SUCCESS)
      context_->fail(result, "cuLaunchKernel", " (kernel '" + cuda.name + "')");
  };
  if (marking == launch_event::own) return enqueue(wait, {}, enqueue_kernel);
  context_->make_current();
  wait_for(wait);
  enqueue_kernel(stream_->handle);
  unmarked_device_work_ = true;
  return nullptr;
}

event_ptr cuda_queue::mark() {
  try {
    return enqueue({}, {}, [](CUstream) {});
  } catch (...) {
    // What the marker was to cover may still use its memory.
    context_->waits.note();
    context_->driver().cuStreamSynchronize(stream_->handle);
    throw;
  }
}

}  // namespace troupe::detail
