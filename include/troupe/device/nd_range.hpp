#pragma once

#include <array>
#include <cstddef>

namespace troupe {

/// 1 to 3 sizes, written {x}, {x, y} or {x, y, z}; an empty one ({}) means "not given".
struct extent3 {
  extent3() = default;
  extent3(std::size_t x) : values{x, 1, 1}, count(1) {}
  extent3(std::size_t x, std::size_t y) : values{x, y, 1}, count(2) {}
  extent3(std::size_t x, std::size_t y, std::size_t z) : values{x, y, z}, count(3) {}

  std::array<std::size_t, 3> values{1, 1, 1};
  unsigned count = 0;
};

/// The index space of an OpenCL-style launch: 1 to 3 dimensions of global work items, optionally
/// split into work groups of `local` items, optionally starting at `offset`. On CUDA devices the
/// grid is rounded up to whole blocks, so kernels check their bounds, as CUDA kernels do anyway.
class nd_range {
 public:
  using extent = std::array<std::size_t, 3>;

  // -- constructors ---------------------------------------------------------

  /// `global` has 1 to 3 sizes; `local` is empty (the runtime picks) or has as many as `global`;
  /// so has `offset` when given: nd_range{{n}}, nd_range{{n, m}, {16, 16}}. A mismatch fails
  /// the launch with errc::invalid_argument.
  nd_range(extent3 global, extent3 local = {}, extent3 offset = {});

  // -- properties -----------------------------------------------------------

  /// Number of dimensions, 1 to 3 (0 when the constructor's arguments were malformed).
  unsigned dimensions() const noexcept { return dims_; }
  const extent& global() const noexcept { return global_; }
  /// All zero when the runtime picks the work-group size.
  const extent& local() const noexcept { return local_; }
  const extent& offset() const noexcept { return offset_; }
  bool has_local() const noexcept { return local_[0] != 0; }
  /// Why the constructor's arguments are malformed; empty when they are fine.
  const char* problem() const noexcept { return problem_; }

 private:
  unsigned dims_ = 0;
  extent global_{1, 1, 1};
  extent local_{0, 0, 0};
  extent offset_{0, 0, 0};
  const char* problem_ = nullptr;
};

/// A CUDA-style launch: a grid of blocks, threads per block, and dynamic shared memory in bytes.
/// On OpenCL devices it is the nd_range global = grid × block, local = block; dynamic shared
/// memory is then an error (OpenCL passes local memory as an argument: `local_memory<T>{n}`).
struct cuda_grid {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  std::size_t shared_bytes = 0;
};

}  // namespace troupe
