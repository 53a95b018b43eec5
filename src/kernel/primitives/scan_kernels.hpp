#pragma once

#include <cstddef>
#include <string>

// Shared by the scan and the compaction: the work-group shape of their kernels.
namespace troupe::kernel::detail {

/// Threads per block and elements per thread of the scan kernels: one block scans a tile.
inline constexpr std::size_t scan_block = 256;
inline constexpr std::size_t scan_items = 8;
inline constexpr std::size_t scan_tile = scan_block * scan_items;

/// The number of blocks (and global work items) that cover n elements, `per_block` each.
inline std::size_t blocks_for(std::size_t n, std::size_t per_block) {
  return n == 0 ? 1 : (n + per_block - 1) / per_block;
}

}  // namespace troupe::kernel::detail
