#include "device/opencl/opencl_program.hpp"

#include "device/opencl/opencl_kernel.hpp"

namespace troupe::detail {
namespace {

/// The program's binary for its one device.
std::vector<unsigned char> program_binary(cl_program p, const std::string& device) {
  std::size_t size = 0;
  check_opencl(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
               "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", device);
  std::vector<unsigned char> binary(size);
  unsigned char* data = binary.data();
  check_opencl(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr),
               "clGetProgramInfo(CL_PROGRAM_BINARIES)", device);
  return binary;
}

}  // namespace

opencl_program::~opencl_program() {
  clReleaseProgram(program_);
}

std::vector<std::byte> opencl_program::binary() const {
  if (image_.binary.empty()) image_.binary = program_binary(program_, context_->name);
  return image_.serialize();
}

std::unique_ptr<backend_kernel> opencl_program::kernel(const std::string& name) {
  auto found = image_.kernels.find(name);
  if (found == image_.kernels.end()) {
    std::string names;
    for (auto& [n, params] : image_.kernels) names += (names.empty() ? "" : ", ") + n;
    throw error(errc::invalid_argument, "program for device '" + context_->name +
                                            "' has no kernel '" + name +
                                            "' (it has: " + (names.empty() ? "none" : names) + ")");
  }
  auto k = std::make_unique<opencl_kernel>(program_, context_);
  k->name = name;
  k->params = found->second;
  k->give_back(k->take());  // fail now, not at the first launch, if the kernel is unusable
  return k;
}

}  // namespace troupe::detail
