#pragma once

#include <string>

namespace troupe::kernel {

/// A kernel's code: OpenCL C for OpenCL devices, CUDA C++ (compiled by NVRTC) for CUDA
/// devices, with the build options both get. Each device compiles the variant of its backend;
/// spawning on a device whose variant is empty fails, naming the device.
struct source {
  std::string opencl;
  std::string cuda;
  std::string options;
};

}  // namespace troupe::kernel
