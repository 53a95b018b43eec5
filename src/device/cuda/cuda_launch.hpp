#pragma once

// How a launch_shape becomes a CUDA grid of thread blocks.

#include <array>
#include <string_view>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"

namespace troupe::detail {

struct cuda_geometry {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  /// A global size is zero: there is nothing to run.
  bool empty = false;
};

/// Blocks of shape.local, or of a default size when it is all zero (1D: 256, 2D: 16×16,
/// 3D: 8×8×4, never larger than the global size), and as many as cover shape.global. Throws
/// troupe::error (errc::invalid_argument) for an offset, a block or grid the device cannot run,
/// or too much dynamic shared memory.
cuda_geometry launch_geometry(const launch_shape& shape, const cuda_limits& limits,
                              std::string_view device_name);

}  // namespace troupe::detail
