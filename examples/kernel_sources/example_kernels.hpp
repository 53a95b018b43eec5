#pragma once

// The kernels that examples/, tools/troupe-tour, tests/ and bench/ share, each written once in
// OpenCL C and once in CUDA C++ (compiled at run time by NVRTC). Plain strings, so that programs
// on the raw OpenCL or CUDA API can use them as well as kernel actors. Each string begins and
// ends with a line break, so that they can be joined into one program source. The benchmarks
// measure these exact bytes: changing one changes their baseline.
namespace example_kernels {

/// c = a · b for n × n matrices of floats, row-major: one work item per element of c, on a 2-D
/// range of at least n × n (items outside the matrix do nothing, as CUDA grids are rounded up).
inline constexpr const char* m_mult_opencl = R"(
__kernel void m_mult(__global const float* a, __global const float* b, __global float* c,
                     uint n) {
  size_t x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= n) return;
  float sum = 0;
  for (uint k = 0; k < n; ++k) sum += a[y * n + k] * b[k * n + x];
  c[y * n + x] = sum;
}
)";
/// m_mult in CUDA C++.
inline constexpr const char* m_mult_cuda = R"(
extern "C" __global__ void m_mult(const float* a, const float* b, float* c, unsigned n) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n || y >= n) return;
  float sum = 0;
  for (unsigned k = 0; k < n; ++k) sum += a[y * n + k] * b[k * n + x];
  c[y * n + x] = sum;
}
)";

/// y = a · x + y on the first n floats, one work item per element (items past n do nothing).
inline constexpr const char* saxpy_opencl = R"(
__kernel void saxpy(float a, __global const float* x, __global float* y, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
)";
/// saxpy in CUDA C++.
inline constexpr const char* saxpy_cuda = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

/// y = x · by, one work item per element.
inline constexpr const char* scale_opencl = R"(
__kernel void scale(__global const float* x, __global float* y, float by) {
  size_t i = get_global_id(0);
  y[i] = x[i] * by;
}
)";
/// scale in CUDA C++.
inline constexpr const char* scale_cuda = R"(
extern "C" __global__ void scale(const float* x, float* y, float by) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] * by;
}
)";

/// x = x + 1 in place, one work item per element.
inline constexpr const char* add_one_opencl = R"(
__kernel void add_one(__global float* x) {
  x[get_global_id(0)] += 1.0f;
}
)";
/// add_one in CUDA C++.
inline constexpr const char* add_one_cuda = R"(
extern "C" __global__ void add_one(float* x) {
  x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}
)";

}  // namespace example_kernels
