#include "device/opencl/opencl_host_memory.hpp"

namespace troupe::detail {

opencl_host_memory::~opencl_host_memory() {
  cl_event done = nullptr;
  if (clEnqueueUnmapMemObject(queue_, mem_, data, 0, nullptr, &done) == CL_SUCCESS) {
    clWaitForEvents(1, &done);
    clReleaseEvent(done);
  }
  clReleaseCommandQueue(queue_);
  clReleaseMemObject(mem_);
}

}  // namespace troupe::detail
