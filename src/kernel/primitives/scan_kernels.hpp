#pragma once

#include <cstddef>

#include "troupe/device/nd_range.hpp"

// Shared by the scan, the compaction and the radix sort: the work-group shape of their kernels.
namespace troupe::kernel::detail {

/// Threads per block and elements per thread of the scan kernels: one block scans a tile.
inline constexpr std::size_t scan_block = 256;
inline constexpr std::size_t scan_items = 8;
inline constexpr std::size_t scan_tile = scan_block * scan_items;

/// The number of blocks (and global work items) that cover n elements, `per_block` each.
inline std::size_t blocks_for(std::size_t n, std::size_t per_block) {
  return n == 0 ? 1 : (n + per_block - 1) / per_block;
}

/// One block per tile of n elements.
inline nd_range tiles_range(std::size_t n) {
  return nd_range{{blocks_for(n, scan_tile) * scan_block}, {scan_block}};
}

/// One work item per element of n, in whole blocks.
inline nd_range items_range(std::size_t n) {
  return nd_range{{blocks_for(n, scan_block) * scan_block}, {scan_block}};
}

}  // namespace troupe::kernel::detail
