#pragma once

// Kernel actor tests run once per device of every backend present (PoCL in CI; CUDA and
// NVIDIA's OpenCL on a GPU machine), with the same kernels in OpenCL C and CUDA C++.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../device/device_fixture.hpp"
#include "example_kernels.hpp"
#include "troupe/kernel.hpp"

namespace troupe::test {

inline const kernel::source& kernel_test_sources() {
  // scale and m_mult are the examples' (examples/kernel_sources/); the others are the tests' own.
  static const kernel::source sources{
      std::string{example_kernels::scale_opencl} + example_kernels::m_mult_opencl + R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void increment(__global int* x, int by) {
  size_t i = get_global_id(0);
  x[i] += by;
}
__kernel void nothing(__global const float* x) {}
__kernel void block_sums(__global const int* in, __global int* out, __local int* part,
                         __global int* scratch) {
  size_t lid = get_local_id(0), gid = get_global_id(0);
  part[lid] = in[gid];
  scratch[gid] = in[gid] * 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    int sum = 0;
    for (size_t i = 0; i < get_local_size(0); ++i) sum += part[i] + scratch[gid + i] - in[gid + i];
    out[get_group_id(0)] = sum;
  }
}
__kernel void first_of_each(__global const int* in, __global int* out, uint stride) {
  size_t i = get_global_id(0);
  out[i] = in[i * stride];
}
)",
      std::string{example_kernels::scale_cuda} + example_kernels::m_mult_cuda + R"(
extern "C" __global__ void add(const float* a, const float* b, float* c) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  c[i] = a[i] + b[i];
}
extern "C" __global__ void increment(int* x, int by) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] += by;
}
extern "C" __global__ void nothing(const float* x) {}
extern "C" __global__ void block_sums(const int* in, int* out, int* scratch) {
  extern __shared__ int part[];
  unsigned lid = threadIdx.x, gid = blockIdx.x * blockDim.x + threadIdx.x;
  part[lid] = in[gid];
  scratch[gid] = in[gid] * 2;
  __syncthreads();
  if (lid == 0) {
    int sum = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) sum += part[i] + scratch[gid + i] - in[gid + i];
    out[blockIdx.x] = sum;
  }
}
extern "C" __global__ void first_of_each(const int* in, int* out, unsigned stride) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i * stride];
}
)",
      ""};
  return sources;
}

/// A fresh actor system and the device under test.
class kernel_test : public device_test {
 protected:
  bool cuda() const { return dev.backend() == backend::cuda; }
};

/// The error a future fails with; fails the test if it does not.
template <class T>
troupe::error error_of(future<T> f) {
  try {
    f.get();
  } catch (const troupe::error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error, got a value";
  return {};
}

}  // namespace troupe::test
