#pragma once

// Device memory and page-locked host memory of one CUDA device.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"

namespace troupe::detail {

/// Device memory given back by buffers, kept for allocations of the same size: on an H200,
/// cuMemAlloc and cuMemFree take 40-60 µs each, three of each as much as a 1000 x 1000 multiply
/// request's kernel (bench-kernel matmul_request). Up to `limit` bytes are kept, the least
/// recently returned freed first; an allocation that finds the device full frees them all and
/// tries again, so the cache never causes an out-of-memory error.
class device_memory_cache {
 public:
  device_memory_cache(std::shared_ptr<cuda_context> context, std::size_t limit);
  ~device_memory_cache();
  device_memory_cache(const device_memory_cache&) = delete;
  device_memory_cache& operator=(const device_memory_cache&) = delete;

  /// Memory of exactly `bytes` bytes (not zero): a kept block, else cuMemAlloc. Throws
  /// troupe::error (errc::out_of_device_memory says how much is free).
  CUdeviceptr allocate(std::size_t bytes);
  /// Keeps the block, or frees it when it would not fit under the limit.
  void give_back(CUdeviceptr address, std::size_t bytes) noexcept;
  /// Frees every kept block.
  void release_all() noexcept;

  const std::shared_ptr<cuda_context> context;

 private:
  struct kept_block {
    CUdeviceptr address;
    std::uint64_t returned;  // a counter: lower is older
  };
  void free_oldest() noexcept;  // under mutex_

  std::size_t limit_;
  std::mutex mutex_;
  std::multimap<std::size_t, kept_block> kept_;  // by size
  std::size_t kept_bytes_ = 0;
  std::uint64_t returns_ = 0;
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
