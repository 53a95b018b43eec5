#include "device/cuda/cuda_launch.hpp"

#include <algorithm>
#include <string>

#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

constexpr std::array<const char*, 3> axis_names{"x", "y", "z"};

// Default blocks of 256 threads: a multiple of the warp size that leaves room for several
// blocks per multiprocessor.
constexpr std::array<std::array<std::size_t, 3>, 3> default_blocks{{
    {256, 1, 1},
    {16, 16, 1},
    {8, 8, 4},
}};

[[noreturn]] void reject(std::string_view device_name, const std::string& message) {
  throw error(errc::invalid_argument,
              "CUDA launch on device '" + std::string(device_name) + "': " + message);
}

}  // namespace

cuda_geometry launch_geometry(const launch_shape& shape, const cuda_limits& limits,
                              std::string_view device_name) {
  const unsigned dimensions = shape.dimensions;
  if (dimensions < 1 || dimensions > 3) {
    reject(device_name, "a launch has 1 to 3 dimensions, not " + std::to_string(dimensions));
  }
  for (std::size_t offset : shape.offset) {
    if (offset != 0) {
      reject(device_name,
             "nd_range offsets are an OpenCL feature; on CUDA pass the offset as a kernel "
             "argument");
    }
  }
  const bool pick_block = std::all_of(shape.local.begin(), shape.local.begin() + dimensions,
                                      [](std::size_t size) { return size == 0; });
  std::array<std::size_t, 3> global{1, 1, 1};
  std::array<std::size_t, 3> block{1, 1, 1};
  for (unsigned axis = 0; axis < dimensions; ++axis) {
    global[axis] = shape.global[axis];
    if (pick_block) {
      block[axis] =
          std::max<std::size_t>(1, std::min(default_blocks[dimensions - 1][axis], global[axis]));
    } else if (shape.local[axis] == 0) {
      reject(device_name, std::string("the block size is zero along ") + axis_names[axis]);
    } else {
      block[axis] = shape.local[axis];
    }
  }

  // Each factor is checked before multiplying, so the product cannot overflow.
  for (unsigned axis = 0; axis < 3; ++axis) {
    if (block[axis] > limits.max_block[axis]) {
      reject(device_name, "a block of " + std::to_string(block[axis]) + " threads along " +
                              axis_names[axis] + " exceeds the device's limit of " +
                              std::to_string(limits.max_block[axis]));
    }
  }
  const std::size_t threads = block[0] * block[1] * block[2];
  if (threads > limits.max_threads_per_block) {
    reject(device_name, "a block of " + std::to_string(block[0]) + "x" + std::to_string(block[1]) +
                            "x" + std::to_string(block[2]) + " = " + std::to_string(threads) +
                            " threads exceeds the device's limit of " +
                            std::to_string(limits.max_threads_per_block) + " threads per block");
  }
  if (shape.shared_bytes > limits.max_shared_bytes) {
    reject(device_name, std::to_string(shape.shared_bytes) +
                            " bytes of dynamic shared memory exceed the device's limit of " +
                            std::to_string(limits.max_shared_bytes) + " bytes per block");
  }

  cuda_geometry geometry;
  for (unsigned axis = 0; axis < 3; ++axis) {
    geometry.block[axis] = static_cast<unsigned>(block[axis]);
    if (global[axis] == 0) {
      geometry.empty = true;
      continue;
    }
    const std::size_t blocks = (global[axis] - 1) / block[axis] + 1;
    if (blocks > limits.max_grid[axis]) {
      reject(device_name, "the grid needs " + std::to_string(blocks) + " blocks along " +
                              axis_names[axis] + "; the device allows " +
                              std::to_string(limits.max_grid[axis]));
    }
    geometry.grid[axis] = static_cast<unsigned>(blocks);
  }
  if (geometry.empty) geometry.grid = {0, 0, 0};
  return geometry;
}

}  // namespace troupe::detail
