// The kernels of bench-device, each in OpenCL C (OpenCL devices) and CUDA C++ (CUDA devices,
// compiled by NVRTC). troupe and the native baseline build the very same text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "troupe/device/device_info.hpp"

namespace troupe::bench::kernels {

/// One kernel in both languages, and the compiler options each needs.
struct source {
  const char* name;
  const char* opencl;
  const char* cuda;
  /// NVRTC options, on both sides of a CUDA comparison.
  std::vector<std::string> cuda_options;

  const char* text(troupe::backend language) const {
    return language == troupe::backend::cuda ? cuda : opencl;
  }
  /// The options as one string, as troupe's device::compile takes them.
  std::string options(troupe::backend language) const {
    std::string joined;
    if (language != troupe::backend::cuda) return joined;
    for (const std::string& option : cuda_options) joined += (joined.empty() ? "" : " ") + option;
    return joined;
  }
};

/// HPXCL's stencil: s(x_i) = 0.5 x_{i-1} + x_i + 0.5 x_{i+1} inside, ends copied.
inline const source stencil{"stencil",
                            R"(
__kernel void stencil(__global const float* in, __global float* out, uint n) {
  uint i = (uint)get_global_id(0);
  if (i >= n) return;
  out[i] = (i == 0 || i == n - 1) ? in[i] : 0.5f * in[i - 1] + in[i] + 0.5f * in[i + 1];
}
)",
                            R"(
extern "C" __global__ void stencil(const float* in, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = (i == 0 || i == n - 1) ? in[i] : 0.5f * in[i - 1] + in[i] + 0.5f * in[i + 1];
}
)",
                            {}};

/// HPXCL's partition kernel: x_i <- sqrt(sin^2 x_i + cos^2 x_i), which is 1 for every x_i.
inline const source partition{"sqrt_sin_cos",
                              R"(
__kernel void sqrt_sin_cos(__global float* x, uint n) {
  uint i = (uint)get_global_id(0);
  if (i >= n) return;
  float s = sin(x[i]);
  float c = cos(x[i]);
  x[i] = sqrt(s * s + c * c);
}
)",
                              R"(
extern "C" __global__ void sqrt_sin_cos(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = sinf(x[i]);
  float c = cosf(x[i]);
  x[i] = sqrtf(s * s + c * c);
}
)",
                              {}};

/// The latency kernel: one work item adds 1 to a counter. As cheap as an empty kernel, and the
/// counter lets each run check that every launch ran.
inline const source tick{"tick",
                         R"(
__kernel void tick(__global int* counter) { counter[0] += 1; }
)",
                         R"(
extern "C" __global__ void tick(int* counter) { counter[0] += 1; }
)",
                         {}};

/// Mandelbrot in float, at most 256 iterations, coloured by mandelbrot::colour below. Fused
/// multiply-adds are off on both languages, so every pixel's float arithmetic is the CPU
/// reference's, operation for operation.
inline const source mandelbrot{"mandelbrot",
                               R"(
#pragma OPENCL FP_CONTRACT OFF
__kernel void mandelbrot(__global uchar* rgb, uint width, uint height, float x0, float y0,
                         float step) {
  uint px = (uint)get_global_id(0);
  uint py = (uint)get_global_id(1);
  if (px >= width || py >= height) return;
  float cx = x0 + (float)px * step;
  float cy = y0 + (float)py * step;
  float x = 0.0f;
  float y = 0.0f;
  uint iterations = 0;
  while (iterations < 256u && x * x + y * y <= 4.0f) {
    float next = x * x - y * y + cx;
    y = 2.0f * x * y + cy;
    x = next;
    ++iterations;
  }
  size_t pixel = 3 * ((size_t)py * width + px);
  bool inside = iterations == 256u;
  rgb[pixel] = (uchar)(iterations & 255u);
  rgb[pixel + 1] = inside ? 0 : (uchar)min(iterations * 4u, 255u);
  rgb[pixel + 2] = inside ? 0 : (uchar)min(64u + iterations * 8u, 255u);
}
)",
                               R"(
extern "C" __global__ void mandelbrot(unsigned char* rgb, unsigned width, unsigned height,
                                      float x0, float y0, float step) {
  unsigned px = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= width || py >= height) return;
  float cx = x0 + (float)px * step;
  float cy = y0 + (float)py * step;
  float x = 0.0f;
  float y = 0.0f;
  unsigned iterations = 0;
  while (iterations < 256u && x * x + y * y <= 4.0f) {
    float next = x * x - y * y + cx;
    y = 2.0f * x * y + cy;
    x = next;
    ++iterations;
  }
  size_t pixel = 3 * ((size_t)py * width + px);
  bool inside = iterations == 256u;
  rgb[pixel] = (unsigned char)(iterations & 255u);
  rgb[pixel + 1] = inside ? 0 : (unsigned char)min(iterations * 4u, 255u);
  rgb[pixel + 2] = inside ? 0 : (unsigned char)min(64u + iterations * 8u, 255u);
}
)",
                               {"--fmad=false"}};

}  // namespace troupe::bench::kernels
