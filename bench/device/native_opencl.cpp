#include "device/native_opencl.hpp"

#include <stdexcept>

namespace troupe::bench::opencl {

void check(cl_int status, std::string_view call) {
  if (status != CL_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed with status " + std::to_string(status));
}

std::vector<cl_device_id> all_devices() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  std::vector<cl_device_id> found;
  for (cl_platform_id platform : platforms) {
    cl_uint devices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(devices);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices, ids.data(), nullptr);
    found.insert(found.end(), ids.begin(), ids.end());
  }
  return found;
}

std::string device_name(cl_device_id id) {
  std::size_t size = 0;
  check(clGetDeviceInfo(id, CL_DEVICE_NAME, 0, nullptr, &size), "clGetDeviceInfo");
  std::string name(size, '\0');
  check(clGetDeviceInfo(id, CL_DEVICE_NAME, size, name.data(), nullptr), "clGetDeviceInfo");
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

device::device(cl_device_id id) : id_(id), name_(device_name(id)) {
  cl_int status = CL_SUCCESS;
  context_ = opencl::context{clCreateContext(nullptr, 1, &id_, nullptr, nullptr, &status)};
  check(status, "clCreateContext");
}

queue device::make_queue() const {
  cl_int status = CL_SUCCESS;
  queue made{clCreateCommandQueue(context(), id_, 0, &status)};
  check(status, "clCreateCommandQueue");
  return made;
}

memory device::allocate(std::size_t bytes) const {
  cl_int status = CL_SUCCESS;
  memory made{clCreateBuffer(context(), CL_MEM_READ_WRITE, bytes, nullptr, &status)};
  check(status, "clCreateBuffer");
  return made;
}

kernel device::build(const std::string& source, const char* name) const {
  const char* text = source.c_str();
  std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  owned<cl_program, clReleaseProgram> program{
      clCreateProgramWithSource(context(), 1, &text, &length, &status)};
  check(status, "clCreateProgramWithSource");
  status = clBuildProgram(program.get(), 1, &id_, "", nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::size_t size = 0;
    clGetProgramBuildInfo(program.get(), id_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program.get(), id_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    throw std::runtime_error("clBuildProgram failed with status " + std::to_string(status) + ":\n" +
                             log);
  }
  kernel made{clCreateKernel(program.get(), name, &status)};
  check(status, "clCreateKernel");
  return made;
}

}  // namespace troupe::bench::opencl
