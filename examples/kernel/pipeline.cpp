// A pipeline of kernel actors on device-resident memory: `finish * square * scale` takes a host
// vector, keeps the intermediate results on the device (mem_ref), and answers with a vector.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "../device/pick_device.hpp"
#include "example_kernels.hpp"

using namespace troupe::kernel;

// scale is the kernel of examples/kernel_sources/; square is this example's own.
const source kernels{std::string{example_kernels::scale_opencl} + R"(
__kernel void square(__global float* x) {
  size_t i = get_global_id(0);
  x[i] = x[i] * x[i];
})",
                     std::string{example_kernels::scale_cuda} + R"(
extern "C" __global__ void square(float* x) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = x[i] * x[i];
})",
                     ""};

int main() {
  troupe::actor_system sys;
  auto dev = pick_device(sys);
  if (!dev) return 0;
  const std::size_t n = 1024;
  const troupe::nd_range range{{n}};

  // Host in, device out; device in place; device in, host out.
  auto scale = sys.spawn_kernel(kernels, "scale", range, on(*dev), in<float, val>{},
                                out<float, ref>{}, priv<float>{3.0f});
  auto square = sys.spawn_kernel(kernels, "square", range, on(*dev), in_out<float, ref, ref>{});
  auto finish = sys.spawn_kernel(kernels, "scale", range, on(*dev), in<float, ref>{},
                                 out<float, val>{}, priv<float>{0.5f});
  auto pipeline = finish * square * scale;

  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 10);
  auto y = troupe::request<std::vector<float>>(pipeline, x).get();

  bool right = y.size() == n;
  for (std::size_t i = 0; i < n && right; ++i) right = y[i] == 0.5f * (3 * x[i]) * (3 * x[i]);
  std::cout << "0.5 * (3x)^2 through three kernel actors: " << (right ? "ok" : "WRONG") << "\n";
  return right ? EXIT_SUCCESS : EXIT_FAILURE;
}
