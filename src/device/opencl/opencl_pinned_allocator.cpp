#include "device/opencl/opencl_pinned_allocator.hpp"

namespace troupe::detail {

opencl_pinned_allocator::opencl_pinned_allocator(context_ptr context)
    : context_(std::move(context)) {
  cl_int status = CL_SUCCESS;
  mapper_ = clCreateCommandQueue(context_->context, context_->device, 0, &status);
  check_opencl(status, "clCreateCommandQueue (for staging)", context_->name);
}

opencl_pinned_allocator::~opencl_pinned_allocator() {
  clReleaseCommandQueue(mapper_);
}

opencl_staging_block opencl_pinned_allocator::allocate(std::size_t bytes) {
  cl_int status = CL_SUCCESS;
  opencl_staging_block block;
  block.bytes = bytes;
  block.mem = clCreateBuffer(context_->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                             nullptr, &status);
  check_opencl(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR) (for staging)", context_->name);
  block.data = clEnqueueMapBuffer(mapper_, block.mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                  0, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) clReleaseMemObject(block.mem);
  check_opencl(status, "clEnqueueMapBuffer (for staging)", context_->name);
  return block;
}

void opencl_pinned_allocator::release(const opencl_staging_block& block) const noexcept {
  cl_event unmapped = nullptr;
  if (clEnqueueUnmapMemObject(mapper_, block.mem, block.data, 0, nullptr, &unmapped) ==
      CL_SUCCESS) {
    clWaitForEvents(1, &unmapped);
    clReleaseEvent(unmapped);
  }
  clReleaseMemObject(block.mem);
}

}  // namespace troupe::detail
