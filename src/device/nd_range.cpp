#include "troupe/device/nd_range.hpp"

namespace troupe {

nd_range::nd_range(extent3 global, extent3 local, extent3 offset) {
  if (global.count == 0) {
    problem_ = "nd_range: the global size has 1 to 3 dimensions";
    return;
  }
  if (local.count != 0 && local.count != global.count) {
    problem_ = "nd_range: the local size has as many dimensions as the global size";
    return;
  }
  if (offset.count != 0 && offset.count != global.count) {
    problem_ = "nd_range: the offset has as many dimensions as the global size";
    return;
  }
  dims_ = global.count;
  global_ = global.values;
  if (local.count != 0) local_ = local.values;
  if (offset.count != 0) {
    offset_ = offset.values;
    for (unsigned d = dims_; d < 3; ++d) offset_[d] = 0;
  }
  for (unsigned d = 0; d < dims_; ++d) {
    if (global_[d] == 0) problem_ = "nd_range: a global size is 0";
    if (local.count != 0 && local_[d] == 0) problem_ = "nd_range: a local size is 0";
    if (local.count != 0 && local_[d] != 0 && global_[d] % local_[d] != 0)
      problem_ = "nd_range: each global size must be a multiple of its local size";
  }
}

}  // namespace troupe
