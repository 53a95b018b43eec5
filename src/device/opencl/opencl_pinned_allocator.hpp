#pragma once

// The pinned blocks of an OpenCL device's staging_pool.

#include <cstddef>
#include <string>

#include "device/opencl/opencl_context.hpp"
#include "device/staging_pool.hpp"

namespace troupe::detail {

/// A pinned block lent by an opencl_staging pool: a CL_MEM_ALLOC_HOST_PTR buffer, mapped.
struct opencl_staging_block {
  cl_mem mem = nullptr;
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// Makes and frees the blocks of an opencl_staging pool.
class opencl_pinned_allocator {
 public:
  // -- member types --------------------------------------------------------

  using block_type = opencl_staging_block;
  using owner = context_ptr;

  // -- constructors --------------------------------------------------------

  /// Creates the queue that maps and unmaps the blocks; throws troupe::error.
  explicit opencl_pinned_allocator(context_ptr context);
  ~opencl_pinned_allocator();
  opencl_pinned_allocator(const opencl_pinned_allocator&) = delete;
  opencl_pinned_allocator& operator=(const opencl_pinned_allocator&) = delete;

  // -- properties ----------------------------------------------------------

  /// Power-of-two sizes from 256 KiB to 64 MiB and multiples of 64 MiB above, up to 2 GiB kept
  /// for reuse: the three of a 12000 x 12000 float request (576 MB each) stay pinned.
  static constexpr staging_sizes sizes{std::size_t{256} << 10, std::size_t{64} << 20,
                                       std::size_t{2} << 30};

  const std::string& device_name() const noexcept { return context_->name; }

  // -- operations ----------------------------------------------------------

  /// A mapped block of `bytes` bytes; throws troupe::error. Its blocking map waits for no
  /// command of the device: it is the only command on this allocator's own queue but for other
  /// blocks' maps and unmaps, on a buffer that no other command uses yet.
  opencl_staging_block allocate(std::size_t bytes);
  /// Unmaps and frees `block`, which the device is done with; the wait for the unmap is as
  /// allocate()'s for the map.
  void release(const opencl_staging_block& block) const noexcept;

 private:
  context_ptr context_;
  cl_command_queue mapper_ = nullptr;  // maps and unmaps the blocks
};

/// One OpenCL device's pinned blocks.
using opencl_staging = staging_pool<opencl_pinned_allocator>;

}  // namespace troupe::detail
