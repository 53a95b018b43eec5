#pragma once

// One OpenCL device's context, shared by everything made in it.

#include <memory>
#include <string>

#include "device/device_waits.hpp"
#include "device/opencl/opencl_errors.hpp"

namespace troupe::detail {

/// Keeps a context alive for everything made in it.
struct opencl_context {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  std::string name;
  /// The calls that waited for the device on a scheduler worker: none (device_waits).
  device_waits waits;
  ~opencl_context() {
    if (context != nullptr) clReleaseContext(context);
  }
};
using context_ptr = std::shared_ptr<opencl_context>;

}  // namespace troupe::detail
