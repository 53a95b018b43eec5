#pragma once

// Device memory and page-locked host memory of one CUDA device.

#include <memory>

#include "device/backend.hpp"
#include "device/block_cache.hpp"
#include "device/cuda/cuda_context.hpp"

namespace troupe::detail {

/// Device memory given back by buffers, kept for allocations of the same size: three
/// cuMemAlloc/cuMemFree pairs cost as much as a 1000 x 1000 multiply request's kernel
/// (bench-kernel matmul_request). An allocation that finds the device full frees every kept
/// block and tries again, so the cache never causes an out-of-memory error.
class device_memory_cache {
 public:
  /// Keeps up to `limit` bytes, in blocks of at most a quarter of that.
  device_memory_cache(std::shared_ptr<cuda_context> context, std::size_t limit);
  ~device_memory_cache();
  device_memory_cache(const device_memory_cache&) = delete;
  device_memory_cache& operator=(const device_memory_cache&) = delete;

  /// Memory of exactly `bytes` bytes (not zero): a kept block, else cuMemAlloc. Throws
  /// troupe::error (errc::out_of_device_memory says how much is free).
  CUdeviceptr allocate(std::size_t bytes);
  /// Keeps the block, or frees it.
  void give_back(CUdeviceptr address, std::size_t bytes) noexcept;

  const std::shared_ptr<cuda_context> context;

 private:
  void release(CUdeviceptr address) const noexcept;

  block_cache<CUdeviceptr> kept_;
};

class cuda_memory final : public backend_memory {
 public:
  /// Memory from `cache`; throws troupe::error (errc::out_of_device_memory says how much is
  /// free).
  cuda_memory(std::shared_ptr<device_memory_cache> cache, std::size_t size);
  ~cuda_memory() override;
  cuda_memory(const cuda_memory&) = delete;
  cuda_memory& operator=(const cuda_memory&) = delete;

  /// Zero for an allocation of zero bytes.
  CUdeviceptr address = 0;

 private:
  std::shared_ptr<device_memory_cache> cache_;
};

/// The address of memory that came from a CUDA device: every backend_memory handed to a CUDA
/// queue or kernel was allocated by this backend.
inline CUdeviceptr device_address(backend_memory& memory) {
  return static_cast<cuda_memory&>(memory).address;
}

class cuda_host_memory final : public backend_host_memory {
 public:
  /// cuMemHostAlloc, portable so that every context may copy from and to it.
  cuda_host_memory(std::shared_ptr<cuda_context> context, std::size_t size);
  ~cuda_host_memory() override;
  cuda_host_memory(const cuda_host_memory&) = delete;
  cuda_host_memory& operator=(const cuda_host_memory&) = delete;

 private:
  std::shared_ptr<cuda_context> context_;
};

}  // namespace troupe::detail
