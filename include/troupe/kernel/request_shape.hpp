#pragma once

#include <cstddef>
#include <vector>

#include "troupe/device/nd_range.hpp"

namespace troupe::kernel {

/// What a size rule sees for one request: its nd_range and, per position of the signature, the
/// element count of the global-memory input there (0 at other positions).
struct request_shape {
  nd_range range{{1}};
  std::vector<std::size_t> sizes;

  /// The number of work items: the product of the global sizes.
  std::size_t work_items() const noexcept {
    const auto& g = range.global();
    return g[0] * g[1] * g[2];
  }
};

}  // namespace troupe::kernel
