// A plain OpenCL program on a device of another machine: it finds the platform that troupe's ICD
// serves (the cl_troupe_remote extension), lists its devices and runs saxpy on the first one.
// Run it with the ICD registered and a troupe-deviced in the hostfile (README, "Remote devices").
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "example_kernels.hpp"  // saxpy
#include "troupe/remote/cl_troupe_remote.h"

// Every call is checked: a failure names the call and its error code, and ends the program.
static void check(cl_int status, const char* call) {
  if (status == CL_SUCCESS) return;
  std::fprintf(stderr, "remote_saxpy: %s failed with OpenCL error %d\n", call, status);
  std::exit(EXIT_FAILURE);
}
#define CHECK(call) check((call), #call)
// clCreate* calls report their error through their last argument: `&status`.
static cl_int status = CL_SUCCESS;
template <class T>
static T created(T object, const char* call) {
  check(status, call);
  return object;
}
#define CREATED(call) created((call), #call)

static std::string platform_info(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  CHECK(clGetPlatformInfo(platform, what, 0, nullptr, &size));
  std::string text(size, '\0');
  CHECK(clGetPlatformInfo(platform, what, size, text.data(), nullptr));
  return text.c_str();  // without the terminating NUL
}

int main() {
  cl_platform_id platforms[16];
  cl_uint count = 0;
  clGetPlatformIDs(16, platforms, &count);  // fails when there is no platform: count stays 0
  cl_platform_id remote = nullptr;
  for (cl_uint i = 0; i < count && i < 16 && !remote; ++i) {
    std::string extensions = platform_info(platforms[i], CL_PLATFORM_EXTENSIONS);
    if (extensions.find("cl_troupe_remote") != std::string::npos) remote = platforms[i];
  }
  if (!remote) {
    std::fprintf(
        stderr,
        "remote_saxpy: no remote troupe platform (cl_troupe_remote) among the %u OpenCL "
        "platforms: is libtroupe-icd.so registered, and a troupe-deviced in the hostfile?\n",
        count);
    return EXIT_FAILURE;
  }
  std::printf("platform %s at %s\n", platform_info(remote, CL_PLATFORM_NAME).c_str(),
              platform_info(remote, (cl_platform_info)CL_PLATFORM_REMOTE_ENDPOINT_TROUPE).c_str());
  cl_device_id devices[16];
  cl_uint found = 0;
  CHECK(clGetDeviceIDs(remote, CL_DEVICE_TYPE_ALL, 16, devices, &found));
  for (cl_uint i = 0; i < found && i < 16; ++i) {
    char name[256] = {};
    CHECK(clGetDeviceInfo(devices[i], CL_DEVICE_NAME, sizeof name - 1, name, nullptr));
    std::printf("  device %u: %s\n", i, name);
  }

  // y = a * x + y on the first device, as any OpenCL program does it, and on the CPU.
  const cl_uint n = 1 << 16;
  const float a = 2.0f;
  std::vector<float> x(n), y(n, 1.0f), expected(n);
  for (cl_uint i = 0; i < n; ++i) x[i] = float(i % 100), expected[i] = a * x[i] + y[i];
  cl_device_id device = devices[0];
  cl_context context = CREATED(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status));
  cl_command_queue queue = CREATED(clCreateCommandQueue(context, device, 0, &status));
  const char* source = example_kernels::saxpy_opencl;
  cl_program program = CREATED(clCreateProgramWithSource(context, 1, &source, nullptr, &status));
  CHECK(clBuildProgram(program, 1, &device, "", nullptr, nullptr));
  cl_kernel saxpy = CREATED(clCreateKernel(program, "saxpy", &status));
  const std::size_t bytes = n * sizeof(float);
  cl_mem dx = CREATED(clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, bytes, x.data(), &status));
  cl_mem dy = CREATED(clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, bytes, y.data(), &status));
  CHECK(clSetKernelArg(saxpy, 0, sizeof a, &a));
  CHECK(clSetKernelArg(saxpy, 1, sizeof dx, &dx));
  CHECK(clSetKernelArg(saxpy, 2, sizeof dy, &dy));
  CHECK(clSetKernelArg(saxpy, 3, sizeof n, &n));
  const std::size_t global = n;
  CHECK(clEnqueueNDRangeKernel(queue, saxpy, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(queue, dy, CL_TRUE, 0, bytes, y.data(), 0, nullptr, nullptr));
  for (cl_mem buffer : {dx, dy}) clReleaseMemObject(buffer);
  clReleaseKernel(saxpy);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);

  const bool right = y == expected;
  std::printf("y = 2x + y on %u floats, against the CPU: %s\n", n, right ? "ok" : "WRONG");
  return right ? EXIT_SUCCESS : EXIT_FAILURE;
}
