#pragma once

#include <cstddef>

namespace troupe {

/// A kernel argument that asks for `count` elements of work-group local memory (OpenCL
/// `__local T*`). On CUDA devices use cuda_grid::shared_bytes instead.
template <class T>
struct local_memory {
  std::size_t count = 0;
};

}  // namespace troupe
