#include "device/cuda/cuda_pinned_allocator.hpp"

#include <string>

namespace troupe::detail {

cuda_staging_block cuda_pinned_allocator::allocate(std::size_t bytes) {
  context_->make_current();
  void* data = nullptr;
  const CUresult result = context_->driver().cuMemHostAlloc(&data, bytes, 0);
  if (result != CUDA_SUCCESS) {
    context_->fail(result, "cuMemHostAlloc",
                   " (" + std::to_string(bytes) + " bytes to stage a copy through)");
  }
  return {data, bytes};
}

void cuda_pinned_allocator::release(const cuda_staging_block& block) const noexcept {
  context_->make_current_quietly();
  context_->driver().cuMemFreeHost(block.data);
}

}  // namespace troupe::detail
