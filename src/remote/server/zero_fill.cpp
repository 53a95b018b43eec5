#include "remote/server/zero_fill.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <mutex>
#include <vector>

#include "remote/server/call.hpp"

namespace troupe::remote::server {

namespace {

// The context's zeroing queue, on its first device; made once.
cl_command_queue zero_queue(cl_object& context) {
  std::lock_guard lock(context.cache_mutex);
  if (context.zero_queue != nullptr) return context.zero_queue;
  auto handle = context.as<cl_context>();
  std::size_t size = 0;
  check(clGetContextInfo(handle, CL_CONTEXT_DEVICES, 0, nullptr, &size),
        "clGetContextInfo(CL_CONTEXT_DEVICES) for zeroing new memory");
  std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
  if (devices.empty()) throw cl_failure{CL_INVALID_CONTEXT, "context without devices"};
  check(clGetContextInfo(handle, CL_CONTEXT_DEVICES, size, devices.data(), nullptr),
        "clGetContextInfo(CL_CONTEXT_DEVICES) for zeroing new memory");
  cl_int status = CL_SUCCESS;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  context.zero_queue = clCreateCommandQueue(handle, devices.front(), 0, &status);
#pragma GCC diagnostic pop
  check(status, "clCreateCommandQueue for zeroing new memory");
  return context.zero_queue;
}

// The widest pattern OpenCL takes that divides `size`: fewer, larger stores.
std::size_t pattern_size(std::size_t size) {
  std::size_t pattern = 128;
  while (size % pattern != 0) pattern /= 2;
  return pattern;
}

cl_int enqueue_zeros(cl_command_queue queue, cl_mem mem) {
  cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
  cl_int status = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, nullptr);
  if (status != CL_SUCCESS) return status;
  if (type == CL_MEM_OBJECT_BUFFER) {
    std::size_t size = 0;
    status = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr);
    if (status != CL_SUCCESS) return status;
    static constexpr std::array<std::byte, 128> zeros{};
    return clEnqueueFillBuffer(queue, mem, zeros.data(), pattern_size(size), 0, size, 0, nullptr,
                               nullptr);
  }
  // Images: every pixel, every slice or layer. Zero bits in the fill colour are zero bits in
  // every format.
  std::array<std::size_t, 3> region{1, 1, 1};
  std::size_t layers = 0;
  const std::array<cl_image_info, 3> extents{CL_IMAGE_WIDTH, CL_IMAGE_HEIGHT, CL_IMAGE_DEPTH};
  for (std::size_t i = 0; i < 3; ++i) {
    std::size_t extent = 0;
    status = clGetImageInfo(mem, extents[i], sizeof extent, &extent, nullptr);
    if (status != CL_SUCCESS) return status;
    region[i] = std::max<std::size_t>(extent, 1);
  }
  status = clGetImageInfo(mem, CL_IMAGE_ARRAY_SIZE, sizeof layers, &layers, nullptr);
  if (status != CL_SUCCESS) return status;
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) region[1] = layers;
  if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY) region[2] = layers;
  const std::array<std::size_t, 3> origin{0, 0, 0};
  static constexpr std::array<cl_uint, 4> colour{};
  return clEnqueueFillImage(queue, mem, colour.data(), origin.data(), region.data(), 0, nullptr,
                            nullptr);
}

}  // namespace

void zero_fill(cl_object& context, cl_mem mem) {
  try {
    auto queue = zero_queue(context);
    check(enqueue_zeros(queue, mem), "zeroing a new memory object");
    check(clFinish(queue), "clFinish after zeroing a new memory object");
  } catch (...) {
    clReleaseMemObject(mem);
    throw;
  }
}

}  // namespace troupe::remote::server
