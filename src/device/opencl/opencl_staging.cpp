#include "device/opencl/opencl_staging.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <thread>

namespace troupe::detail {

opencl_staging::opencl_staging(context_ptr context)
    : context_(std::move(context)),
      // As for CUDA's staging: a quarter of the cores, at most 4.
      copier_(std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u)),
      kept_(most_kept, most_kept) {
  cl_int status = CL_SUCCESS;
  mapper_ = clCreateCommandQueue(context_->context, context_->device, 0, &status);
  check_opencl(status, "clCreateCommandQueue (for staging)", context_->name);
}

opencl_staging::~opencl_staging() {
  kept_.release_all([this](const opencl_staging_block& block) { release(block); });
  clReleaseCommandQueue(mapper_);
}

opencl_staging_block opencl_staging::take(std::size_t bytes) {
  // Callers stage at most 1 GiB (opencl_queue::staged), so neither rounding overflows.
  const std::size_t block_bytes = bytes <= coarse_block
                                      ? std::bit_ceil(std::max(bytes, smallest_block))
                                      : (bytes + coarse_block - 1) / coarse_block * coarse_block;
  if (const std::optional<opencl_staging_block> kept = kept_.take(block_bytes)) return *kept;
  cl_int status = CL_SUCCESS;
  opencl_staging_block block;
  block.bytes = block_bytes;
  block.mem = clCreateBuffer(context_->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                             block_bytes, nullptr, &status);
  check_opencl(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR) (for staging)", context_->name);
  block.data = clEnqueueMapBuffer(mapper_, block.mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                  block_bytes, 0, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) clReleaseMemObject(block.mem);
  check_opencl(status, "clEnqueueMapBuffer (for staging)", context_->name);
  return block;
}

void opencl_staging::give_back(opencl_staging_block block) noexcept {
  kept_.keep(block.bytes, block, [this](const opencl_staging_block& old) { release(old); });
}

void opencl_staging::release(const opencl_staging_block& block) const noexcept {
  cl_event unmapped = nullptr;
  if (clEnqueueUnmapMemObject(mapper_, block.mem, block.data, 0, nullptr, &unmapped) ==
      CL_SUCCESS) {
    clWaitForEvents(1, &unmapped);
    clReleaseEvent(unmapped);
  }
  clReleaseMemObject(block.mem);
}

}  // namespace troupe::detail
