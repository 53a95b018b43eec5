#include "device/staging_pool.hpp"

#include <bit>

#include "troupe/async/error.hpp"

namespace troupe::detail {

std::size_t staging_sizes::block_bytes(std::size_t bytes, const std::string& device) const {
  if (bytes > std::size_t{1} << 55) {  // far beyond any host memory; bit_ceil would overflow
    throw error(errc::out_of_device_memory, "cannot stage a copy of " + std::to_string(bytes) +
                                                " bytes through pinned memory for device '" +
                                                device + "'");
  }
  if (coarse_block == 0 || bytes <= coarse_block)
    return std::bit_ceil(std::max(bytes, smallest_block));
  return (bytes + coarse_block - 1) / coarse_block * coarse_block;
}

}  // namespace troupe::detail
