#pragma once

// OpenCL C source of the kernels most tests build.

namespace troupe::remote_test {

/// Kernels most tests use.
inline const char* const common_kernels = R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void increment(__global int* x, int by) {
  x[get_global_id(0)] += by;
}
__kernel void group_sum(__global const float* in, __global float* out, __local float* scratch) {
  size_t lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
)";

}  // namespace troupe::remote_test
