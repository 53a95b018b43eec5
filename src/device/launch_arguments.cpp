#include "troupe/device/detail/launch_arguments.hpp"

#include <cstddef>

#include "troupe/async/error.hpp"

namespace troupe::detail {

launch_shape make_launch_shape(const nd_range& range) {
  if (range.problem() != nullptr) throw error(errc::invalid_argument, range.problem());
  launch_shape shape;
  shape.dimensions = range.dimensions();
  shape.global = range.global();
  shape.local = range.local();
  shape.offset = range.offset();
  return shape;
}

launch_shape make_launch_shape(const cuda_grid& grid) {
  launch_shape shape;
  shape.dimensions = grid.grid[2] * grid.block[2] > 1   ? 3
                     : grid.grid[1] * grid.block[1] > 1 ? 2
                                                        : 1;
  for (int d = 0; d < 3; ++d) {
    if (grid.grid[d] == 0 || grid.block[d] == 0)
      throw error(errc::invalid_argument, "cuda_grid: grid and block sizes must not be 0");
    shape.global[d] = std::size_t{grid.grid[d]} * grid.block[d];
    shape.local[d] = grid.block[d];
  }
  shape.shared_bytes = grid.shared_bytes;
  return shape;
}

}  // namespace troupe::detail
