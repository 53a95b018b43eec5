#pragma once

// Page-locked host memory of one OpenCL device.

#include "device/backend.hpp"
#include "device/opencl/opencl_context.hpp"

namespace troupe::detail {

/// A CL_MEM_ALLOC_HOST_PTR buffer, mapped once on a queue of its own: how OpenCL hands out
/// page-locked host memory. Unmapped and released when it goes.
class opencl_host_memory final : public backend_host_memory {
 public:
  opencl_host_memory(cl_mem mem, cl_command_queue queue, context_ptr context)
      : mem_(mem), queue_(queue), context_(std::move(context)) {}
  ~opencl_host_memory() override;

 private:
  cl_mem mem_;
  cl_command_queue queue_;
  context_ptr context_;
};

}  // namespace troupe::detail
