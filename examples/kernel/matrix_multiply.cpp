// The first listing of the CAF OpenCL actors paper: a matrix multiply as an actor. The kernel
// actor takes two matrices as host vectors and answers with their product.
#include <cstdlib>
#include <iostream>
#include <vector>

#include "../device/pick_device.hpp"

using namespace troupe::kernel;

constexpr const char* opencl_source = R"(
__kernel void m_mult(__global const float* a, __global const float* b, __global float* c,
                     uint n) {
  size_t x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= n) return;
  float sum = 0;
  for (uint k = 0; k < n; ++k) sum += a[y * n + k] * b[k * n + x];
  c[y * n + x] = sum;
})";

constexpr const char* cuda_source = R"(
extern "C" __global__ void m_mult(const float* a, const float* b, float* c, unsigned n) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n || y >= n) return;
  float sum = 0;
  for (unsigned k = 0; k < n; ++k) sum += a[y * n + k] * b[k * n + x];
  c[y * n + x] = sum;
})";

int main() {
  troupe::actor_system sys;
  auto dev = pick_device(sys);
  if (!dev) return 0;
  const std::size_t n = 64;

  // One work item per element of c; a, b in, c out (n * n elements: the work items).
  auto multiply = sys.spawn_kernel(source{opencl_source, cuda_source, ""}, "m_mult",
                                   troupe::nd_range{{n, n}}, on(*dev), in<float>{}, in<float>{},
                                   out<float>{}, priv<unsigned>{static_cast<unsigned>(n)});

  std::vector<float> a(n * n), b(n * n);
  for (std::size_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % n);       // every row: 0, 1, ..., n-1
    b[i] = i % (n + 1) == 0 ? 1.0f : 0.0f;  // the identity
  }
  auto c = troupe::request<std::vector<float>>(multiply, a, b).get();

  const bool right = c == a;  // a · identity = a
  std::cout << "c = a * identity on " << n << " x " << n << ": " << (right ? "ok" : "WRONG")
            << "\n";
  return right ? EXIT_SUCCESS : EXIT_FAILURE;
}
