#pragma once

// Device memory of one OpenCL device.

#include <cstddef>
#include <memory>

#include "device/backend.hpp"
#include "device/block_cache.hpp"
#include "device/opencl/opencl_context.hpp"

namespace troupe::detail {

/// Buffers given back, kept for allocations of the same size, as CUDA's device_memory_cache
/// keeps device memory: a kernel actor's request allocates its outputs, and creating and
/// releasing them cost the driver more than reuse. An allocation that fails releases every kept
/// buffer and tries again; so does a command that the device refuses for want of memory (an
/// implementation may allocate at first use), after which it fails as before.
class opencl_memory_cache {
 public:
  /// Keeps up to `limit` bytes, in buffers of at most a quarter of that; refuses allocations
  /// over `largest` (CL_DEVICE_MAX_MEM_ALLOC_SIZE).
  opencl_memory_cache(context_ptr context, std::size_t limit, std::size_t largest);
  ~opencl_memory_cache();
  opencl_memory_cache(const opencl_memory_cache&) = delete;
  opencl_memory_cache& operator=(const opencl_memory_cache&) = delete;

  /// A buffer of exactly `bytes` bytes (not zero): a kept one, else clCreateBuffer. Throws
  /// troupe::error (errc::out_of_device_memory).
  cl_mem allocate(std::size_t bytes);
  /// Keeps the buffer, or releases it. The device must be done with it.
  void give_back(cl_mem buffer, std::size_t bytes) noexcept;
  /// Releases every kept buffer.
  void release_all() noexcept;
  /// Throws troupe::error for a failed enqueue, as check_opencl, having first released the kept
  /// buffers if the device was out of memory: the next allocation then finds them free.
  void check_enqueue(cl_int status, const char* call);

 private:
  context_ptr context_;
  std::size_t largest_;
  block_cache<cl_mem> kept_;
};

class opencl_memory final : public backend_memory {
 public:
  /// Memory from `cache`; throws troupe::error.
  opencl_memory(std::shared_ptr<opencl_memory_cache> cache, std::size_t size);
  ~opencl_memory() override;
  opencl_memory(const opencl_memory&) = delete;
  opencl_memory& operator=(const opencl_memory&) = delete;

  cl_mem mem = nullptr;

 private:
  std::shared_ptr<opencl_memory_cache> cache_;
};

}  // namespace troupe::detail
