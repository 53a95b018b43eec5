#pragma once

// The pinned blocks of a CUDA device's staging_pool.

#include <cstddef>
#include <memory>
#include <string>

#include "device/cuda/cuda_context.hpp"
#include "device/staging_pool.hpp"

namespace troupe::detail {

/// A pinned block lent by a cuda_staging pool.
struct cuda_staging_block {
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// Makes and frees the blocks of a cuda_staging pool.
class cuda_pinned_allocator {
 public:
  // -- member types --------------------------------------------------------

  using block_type = cuda_staging_block;
  using owner = std::shared_ptr<cuda_context>;

  // -- constructors --------------------------------------------------------

  explicit cuda_pinned_allocator(std::shared_ptr<cuda_context> context)
      : context_(std::move(context)) {}

  // -- properties ----------------------------------------------------------

  /// Power-of-two sizes from 64 KiB, up to 1 GiB kept for reuse.
  static constexpr staging_sizes sizes{std::size_t{64} << 10, 0, std::size_t{1} << 30};

  const std::string& device_name() const noexcept { return context_->name; }

  // -- operations ----------------------------------------------------------

  /// cuMemHostAlloc of `bytes` bytes; throws troupe::error. The CUDA guide counts a page-locked
  /// allocation among the calls that order the device's streams (implicit synchronization);
  /// whether it also holds the calling thread until they are idle is not measured yet.
  cuda_staging_block allocate(std::size_t bytes);
  /// cuMemFreeHost.
  void release(const cuda_staging_block& block) const noexcept;

 private:
  std::shared_ptr<cuda_context> context_;
};

/// One CUDA device's pinned blocks.
using cuda_staging = staging_pool<cuda_pinned_allocator>;

}  // namespace troupe::detail
