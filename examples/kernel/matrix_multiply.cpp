// The first listing of the CAF OpenCL actors paper: a matrix multiply as an actor. The kernel
// actor takes two matrices as host vectors and answers with their product.
#include <cstdlib>
#include <iostream>
#include <vector>

#include "../device/pick_device.hpp"
#include "example_kernels.hpp"

using namespace troupe::kernel;

int main() {
  troupe::actor_system sys;
  auto dev = pick_device(sys);
  if (!dev) return 0;
  const std::size_t n = 64;

  // One work item per element of c; a, b in, c out (n * n elements: the work items).
  auto multiply =
      sys.spawn_kernel(source{example_kernels::m_mult_opencl, example_kernels::m_mult_cuda, ""},
                       "m_mult", troupe::nd_range{{n, n}}, on(*dev), in<float>{}, in<float>{},
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
