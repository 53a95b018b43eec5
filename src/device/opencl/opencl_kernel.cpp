#include "device/opencl/opencl_kernel.hpp"

namespace troupe::detail {

opencl_kernel::opencl_kernel(cl_program program, context_ptr context)
    : program_(program), context_(std::move(context)) {
  clRetainProgram(program_);
}

opencl_kernel::~opencl_kernel() {
  if (auto k = spare_.load(std::memory_order_relaxed)) clReleaseKernel(k);
  for (auto k : idle_) clReleaseKernel(k);
  clReleaseProgram(program_);
}

}  // namespace troupe::detail
