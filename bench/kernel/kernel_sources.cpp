#include <random>
#include <string>

#include "example_kernels.hpp"
#include "kernel/kernel_bench.hpp"

namespace troupe::bench::kernel_bench {

// The examples' m_mult, byte for byte the kernel measured before it moved there.
const troupe::kernel::source matmul_source{example_kernels::m_mult_opencl,
                                           example_kernels::m_mult_cuda, ""};

const troupe::kernel::source empty_source{"__kernel void empty(__global float* x) {}\n",
                                          "extern \"C\" __global__ void empty(float* x) {}\n", ""};

std::vector<float> matrix(std::size_t n, unsigned seed) {
  std::vector<float> values(n * n);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>((i * seed + i / n) % 7) - 3.0f;
  }
  return values;
}

std::string check_product(const std::vector<float>& a, const std::vector<float>& b, const float* c,
                          std::size_t n) {
  // A fresh sample every run (the values are small integers, so every sum is exact): one whole
  // row and 256 elements anywhere.
  std::mt19937_64 random(std::random_device{}());
  const std::size_t row = random() % n;
  for (std::size_t i = 0; i < n + 256; ++i) {
    const std::size_t y = i < n ? row : random() % n;
    const std::size_t x = i < n ? i : random() % n;
    float expected = 0;
    for (std::size_t k = 0; k < n; ++k) expected += a[y * n + k] * b[k * n + x];
    if (c[y * n + x] != expected) {
      return "c[" + std::to_string(y) + "][" + std::to_string(x) + "] is " +
             std::to_string(c[y * n + x]) + ", expected " + std::to_string(expected);
    }
  }
  return {};
}

}  // namespace troupe::bench::kernel_bench
