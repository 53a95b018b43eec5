#include <random>
#include <string>
#include <vector>

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
  // A fresh sample every run: one whole row and 256 elements anywhere. The values are small
  // integers, so every sum is exact in any order, and all of them are summed in one pass over
  // the rows of b (at N = 12000 on the 2-core development machine: 0.26 s, against 2.3 s for a
  // column of b at a time).
  std::mt19937_64 random(std::random_device{}());
  struct sample {
    std::size_t y, x;
    float sum = 0;
  };
  std::vector<sample> samples;
  samples.reserve(n + 256);
  const std::size_t row = random() % n;
  for (std::size_t x = 0; x < n; ++x) samples.push_back({row, x});
  for (int i = 0; i < 256; ++i) {
    const std::size_t y = random() % n;
    samples.push_back({y, random() % n});
  }
  for (std::size_t k = 0; k < n; ++k) {
    const float* b_row = b.data() + k * n;
    for (sample& each : samples) each.sum += a[each.y * n + k] * b_row[each.x];
  }
  for (const sample& each : samples) {
    const float got = c[each.y * n + each.x];
    if (got != each.sum) {
      return "c[" + std::to_string(each.y) + "][" + std::to_string(each.x) + "] is " +
             std::to_string(got) + ", expected " + std::to_string(each.sum);
    }
  }
  return {};
}

}  // namespace troupe::bench::kernel_bench
