#include "device/cuda/cuda_memory.hpp"

#include <optional>
#include <string>

namespace troupe::detail {

device_memory_cache::device_memory_cache(std::shared_ptr<cuda_context> owner, std::size_t limit)
    : context(std::move(owner)), kept_(limit, limit / 4) {}

device_memory_cache::~device_memory_cache() {
  kept_.release_all([this](CUdeviceptr address) { release(address); });
}

CUdeviceptr device_memory_cache::allocate(std::size_t bytes) {
  if (const std::optional<CUdeviceptr> kept = kept_.take(bytes)) return *kept;
  context->make_current();
  const cuda_driver& driver = context->driver();
  CUdeviceptr address = 0;
  CUresult result = driver.cuMemAlloc(&address, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    kept_.release_all([this](CUdeviceptr kept) { release(kept); });
    result = driver.cuMemAlloc(&address, bytes);
  }
  if (result == CUDA_SUCCESS) return address;
  std::string detail = " (" + std::to_string(bytes) + " bytes requested";
  std::size_t free = 0;
  std::size_t total = 0;
  if (result == CUDA_ERROR_OUT_OF_MEMORY && driver.cuMemGetInfo(&free, &total) == CUDA_SUCCESS) {
    detail += "; " + std::to_string(free) + " of " + std::to_string(total) + " bytes are free";
  }
  context->fail(result, "cuMemAlloc", detail + ")");
}

void device_memory_cache::give_back(CUdeviceptr address, std::size_t bytes) noexcept {
  kept_.keep(bytes, address, [this](CUdeviceptr released) { release(released); });
}

void device_memory_cache::release(CUdeviceptr address) const noexcept {
  context->make_current_quietly();
  context->driver().cuMemFree(address);
}

cuda_memory::cuda_memory(std::shared_ptr<device_memory_cache> cache, std::size_t size)
    : cache_(std::move(cache)) {
  bytes = size;
  if (size != 0) address = cache_->allocate(size);  // cuMemAlloc rejects zero bytes
}

cuda_memory::~cuda_memory() {
  if (address != 0) cache_->give_back(address, bytes);
}

cuda_host_memory::cuda_host_memory(std::shared_ptr<cuda_context> context, std::size_t size)
    : context_(std::move(context)) {
  bytes = size;
  if (size == 0) return;
  context_->make_current();
  const CUresult result = context_->driver().cuMemHostAlloc(&data, size, CU_MEMHOSTALLOC_PORTABLE);
  if (result != CUDA_SUCCESS) {
    data = nullptr;
    context_->fail(result, "cuMemHostAlloc", " (" + std::to_string(size) + " bytes requested)");
  }
}

cuda_host_memory::~cuda_host_memory() {
  if (!data) return;
  context_->make_current_quietly();
  context_->driver().cuMemFreeHost(data);
}

}  // namespace troupe::detail
