// The OpenCL C of bench-remote, one text per program; both sides build the same text.
#pragma once

namespace troupe::bench::remote::kernels {

/// Kernels in single precision or none: tick (launch latency) and the tiled matrix multiply.
inline constexpr const char* common = R"CLC(
// One work item adds one to a counter: a launch that does (almost) nothing, yet can be checked.
kernel void tick(global int* counter) { counter[0] += 1; }

// C = A * B for `rows` rows of A and C, all matrices n wide, row-major; n and rows are multiples
// of TILE, and a work group is TILE x TILE.
#define TILE 16
kernel void matmul(const int n, global const float* a, global const float* b, global float* c) {
  const int column = get_global_id(0);
  const int row = get_global_id(1);
  const int x = get_local_id(0);
  const int y = get_local_id(1);
  local float a_tile[TILE][TILE];
  local float b_tile[TILE][TILE];
  float sum = 0.0f;
  for (int tile = 0; tile < n; tile += TILE) {
    a_tile[y][x] = a[row * n + tile + x];
    b_tile[y][x] = b[(tile + y) * n + column];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) sum += a_tile[y][k] * b_tile[k][x];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + column] = sum;
}
)CLC";

/// BabelStream's OpenCL kernels (OCLStream.cpp), in double precision.
inline constexpr const char* babelstream = R"CLC(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double TYPE;
constant TYPE scalar = 0.4;  // BabelStream's startScalar

kernel void init(global TYPE* restrict a, global TYPE* restrict b, global TYPE* restrict c,
                 TYPE init_a, TYPE init_b, TYPE init_c) {
  const size_t i = get_global_id(0);
  a[i] = init_a;
  b[i] = init_b;
  c[i] = init_c;
}

kernel void copy(global const TYPE* restrict a, global TYPE* restrict c) {
  const size_t i = get_global_id(0);
  c[i] = a[i];
}

kernel void mul(global TYPE* restrict b, global const TYPE* restrict c) {
  const size_t i = get_global_id(0);
  b[i] = scalar * c[i];
}

kernel void add(global const TYPE* restrict a, global const TYPE* restrict b,
                global TYPE* restrict c) {
  const size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}

kernel void triad(global TYPE* restrict a, global const TYPE* restrict b,
                  global const TYPE* restrict c) {
  const size_t i = get_global_id(0);
  a[i] = b[i] + scalar * c[i];
}

// Each work group sums its work items' products in local memory; the host adds the groups' sums.
kernel void stream_dot(global const TYPE* restrict a, global const TYPE* restrict b,
                       global TYPE* restrict sum, local TYPE* restrict wg_sum, int array_size) {
  size_t i = get_global_id(0);
  const size_t local_i = get_local_id(0);
  wg_sum[local_i] = 0.0;
  for (; i < array_size; i += get_global_size(0)) wg_sum[local_i] += a[i] * b[i];
  for (int offset = get_local_size(0) / 2; offset > 0; offset /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (local_i < offset) wg_sum[local_i] += wg_sum[local_i + offset];
  }
  if (local_i == 0) sum[get_group_id(0)] = wg_sum[local_i];
}
)CLC";

}  // namespace troupe::bench::remote::kernels
