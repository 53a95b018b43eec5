#include "troupe/kernel/detail/pinned_block_pool.hpp"

namespace troupe::kernel::detail {

pinned_block_pool::block pinned_block_pool::take(const device& dev, std::size_t bytes) {
  block* best = nullptr;
  block* too_small = nullptr;
  for (auto& kept : blocks_) {
    // Only this pool holds it: no host_buffer or command can take a new reference to it, and
    // the acquire in unique() orders the last holder's use before ours.
    if (!kept->unique()) continue;
    if (kept->bytes() < bytes) {
      too_small = &kept;
    } else if (best == nullptr || kept->bytes() < (*best)->bytes()) {
      best = &kept;
    }
  }
  if (best != nullptr) return *best;
  block fresh = dev.allocate_host<std::byte>(bytes).state();
  const std::size_t freed = too_small != nullptr ? (*too_small)->bytes() : 0;
  if (blocks_.size() < capacity_ && (blocks_.empty() || kept_bytes_ + bytes <= byte_capacity_)) {
    blocks_.push_back(fresh);
    kept_bytes_ += bytes;
  } else if (too_small != nullptr &&
             (blocks_.size() == 1 || kept_bytes_ - freed + bytes <= byte_capacity_)) {
    *too_small = fresh;
    kept_bytes_ += bytes - freed;
  }
  return fresh;
}

}  // namespace troupe::kernel::detail
