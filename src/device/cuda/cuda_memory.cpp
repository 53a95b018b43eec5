#include "device/cuda/cuda_memory.hpp"

#include <string>

namespace troupe::detail {

device_memory_cache::device_memory_cache(std::shared_ptr<cuda_context> owner, std::size_t limit)
    : context(std::move(owner)), limit_(limit) {}

device_memory_cache::~device_memory_cache() {
  release_all();
}

CUdeviceptr device_memory_cache::allocate(std::size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    // Of the blocks of this size, the one returned last: its pages are the likeliest warm.
    auto [first, last] = kept_.equal_range(bytes);
    if (first != last) {
      auto newest = first;
      for (auto it = first; it != last; ++it) {
        if (it->second.returned > newest->second.returned) newest = it;
      }
      const CUdeviceptr address = newest->second.address;
      kept_.erase(newest);
      kept_bytes_ -= bytes;
      return address;
    }
  }
  context->make_current();
  const cuda_driver& driver = context->driver();
  CUdeviceptr address = 0;
  CUresult result = driver.cuMemAlloc(&address, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    release_all();
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
  {
    std::lock_guard lock(mutex_);
    if (bytes <= limit_ / 4) {
      kept_.emplace(bytes, kept_block{address, returns_++});
      kept_bytes_ += bytes;
      while (kept_bytes_ > limit_) free_oldest();
      return;
    }
  }
  context->make_current_quietly();
  context->driver().cuMemFree(address);
}

void device_memory_cache::free_oldest() noexcept {
  auto oldest = kept_.begin();
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->second.returned < oldest->second.returned) oldest = it;
  }
  context->make_current_quietly();
  context->driver().cuMemFree(oldest->second.address);
  kept_bytes_ -= oldest->first;
  kept_.erase(oldest);
}

void device_memory_cache::release_all() noexcept {
  std::lock_guard lock(mutex_);
  while (!kept_.empty()) free_oldest();
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
