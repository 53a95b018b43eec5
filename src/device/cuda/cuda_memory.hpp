#pragma once

// Device memory and page-locked host memory of one CUDA device.

#include <memory>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"

namespace troupe::detail {

class cuda_memory final : public backend_memory {
 public:
  /// cuMemAlloc; throws troupe::error (errc::out_of_device_memory says how much is free).
  cuda_memory(std::shared_ptr<cuda_context> context, std::size_t size);
  ~cuda_memory() override;
  cuda_memory(const cuda_memory&) = delete;
  cuda_memory& operator=(const cuda_memory&) = delete;

  /// Zero for an allocation of zero bytes.
  CUdeviceptr address = 0;

 private:
  std::shared_ptr<cuda_context> context_;
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
