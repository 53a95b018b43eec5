// Median cost of clCreateBuffer + clReleaseMemObject through the first troupe platform.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
int main() {
  cl_uint n = 0;
  clGetPlatformIDs(0, nullptr, &n);
  std::vector<cl_platform_id> ps(n);
  clGetPlatformIDs(n, ps.data(), nullptr);
  cl_platform_id remote = nullptr;
  for (auto p : ps) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::strstr(name, "troupe @")) remote = p;
  }
  if (!remote) {
    std::puts("no troupe platform");
    return 1;
  }
  cl_device_id d;
  clGetDeviceIDs(remote, CL_DEVICE_TYPE_ALL, 1, &d, nullptr);
  cl_int st;
  cl_context c = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &st);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &st);
  for (std::size_t size :
       {std::size_t{4096}, std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{64} << 20}) {
    for (int copy = 0; copy < 2; ++copy) {
      std::vector<char> host(copy ? size : 0, 1);
      std::vector<double> us;
      int reps = size >= (std::size_t{16} << 20) ? 21 : 201;
      for (int i = 0; i < reps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        cl_mem m = clCreateBuffer(c, copy ? CL_MEM_COPY_HOST_PTR : 0, size,
                                  copy ? host.data() : nullptr, &st);
        if (st != CL_SUCCESS) {
          std::printf("create failed %d\n", st);
          return 1;
        }
        clReleaseMemObject(m);
        clFinish(q);
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      std::sort(us.begin(), us.end());
      std::printf("%10zu bytes %-14s median %9.1f us\n", size,
                  copy ? "COPY_HOST_PTR" : "no contents", us[us.size() / 2]);
    }
  }
  return 0;
}
