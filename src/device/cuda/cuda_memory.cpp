#include "device/cuda/cuda_memory.hpp"

#include <string>

namespace troupe::detail {

cuda_memory::cuda_memory(std::shared_ptr<cuda_context> context, std::size_t size)
    : context_(std::move(context)) {
  bytes = size;
  if (size == 0) return;  // cuMemAlloc rejects zero bytes
  context_->make_current();
  const cuda_driver& driver = context_->driver();
  const CUresult result = driver.cuMemAlloc(&address, size);
  if (result == CUDA_SUCCESS) return;
  std::string detail = " (" + std::to_string(size) + " bytes requested";
  std::size_t free = 0;
  std::size_t total = 0;
  if (result == CUDA_ERROR_OUT_OF_MEMORY && driver.cuMemGetInfo(&free, &total) == CUDA_SUCCESS) {
    detail += "; " + std::to_string(free) + " of " + std::to_string(total) + " bytes are free";
  }
  context_->fail(result, "cuMemAlloc", detail + ")");
}

cuda_memory::~cuda_memory() {
  if (address == 0) return;
  context_->make_current_quietly();
  context_->driver().cuMemFree(address);
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
