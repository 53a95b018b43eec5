#pragma once

#include <cstddef>
#include <vector>

#include "troupe/device/detail/host_memory_state.hpp"
#include "troupe/device/device.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::kernel::detail {

/// The page-locked blocks that one device of a kernel actor reads its pinned outputs into. A
/// block is taken again once no host_buffer holds it any more, so a request answers without
/// allocating page-locked memory, which costs far more than copying into it (the driver locks
/// each page). At most `capacity` blocks of `byte_capacity` bytes in all are kept (one block
/// always, however large); beyond that, outputs get fresh blocks that are freed with their last
/// host_buffer, since page-locked memory is taken from the whole machine. Touched by the actor
/// only.
class pinned_block_pool {
 public:
  using block = troupe::detail::intrusive_ptr<troupe::detail::host_memory_state>;

  pinned_block_pool() = default;
  pinned_block_pool(std::size_t capacity, std::size_t byte_capacity)
      : capacity_(capacity), byte_capacity_(byte_capacity) {}

  /// The smallest kept block of at least `bytes` that nothing else holds, or a fresh one of
  /// `bytes` from `dev` (kept if there is room, or in place of a free block too small).
  /// Throws troupe::error where `dev` cannot allocate it.
  block take(const device& dev, std::size_t bytes);

  std::size_t kept() const noexcept { return blocks_.size(); }
  std::size_t kept_bytes() const noexcept { return kept_bytes_; }

 private:
  std::size_t capacity_ = 8;
  std::size_t byte_capacity_ = std::size_t{2} << 30;
  std::size_t kept_bytes_ = 0;
  std::vector<block> blocks_;
};

}  // namespace troupe::kernel::detail
