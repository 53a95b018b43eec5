#pragma once

// Page-locked blocks that a GPU's copies from and to pageable memory go through. Given fresh
// pageable memory, NVIDIA's OpenCL pins it for each copy: a 4 MB write took 610 us and a read
// 720 us on an H200, against 410 and 450 us for memory it had seen before. A request's vectors
// are fresh each time; through a kept pinned block they cost a copy that runs beside the DMA.

#include <cstddef>

#include "device/block_cache.hpp"
#include "device/host_copier.hpp"
#include "device/opencl/opencl_context.hpp"

namespace troupe::detail {

/// A pinned block lent by an opencl_staging pool: a CL_MEM_ALLOC_HOST_PTR buffer, mapped.
struct opencl_staging_block {
  cl_mem mem = nullptr;
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// One device's pinned blocks, in power-of-two sizes from 256 KiB to 64 MiB and in multiples of
/// 64 MiB above, up to 2 GiB kept for reuse (block_cache): the three of a 12000 x 12000 float
/// request (576 MB each) stay pinned.
class opencl_staging {
 public:
  static constexpr std::size_t smallest_block = std::size_t{256} << 10;
  static constexpr std::size_t coarse_block = std::size_t{64} << 20;
  static constexpr std::size_t most_kept = std::size_t{2} << 30;

  explicit opencl_staging(context_ptr context);
  ~opencl_staging();
  opencl_staging(const opencl_staging&) = delete;
  opencl_staging& operator=(const opencl_staging&) = delete;

  /// A block of at least `bytes` bytes; throws troupe::error.
  opencl_staging_block take(std::size_t bytes);
  /// The device must be done with the block.
  void give_back(opencl_staging_block block) noexcept;

  /// Copies into or out of a block with several threads when large.
  void copy(void* destination, const void* source, std::size_t bytes) {
    copier_.copy(destination, source, bytes);
  }
  /// copy() of bytes [from, to), once `ready` has opened each piece of the destination (null:
  /// all is open).
  void copy_when_ready(void* destination, const void* source, std::size_t from, std::size_t to,
                       const destination_gate* ready) {
    copier_.copy_when_ready(destination, source, from, to, ready);
  }

 private:
  void release(const opencl_staging_block& block) const noexcept;

  context_ptr context_;
  cl_command_queue mapper_ = nullptr;  // maps and unmaps the blocks
  host_copier copier_;
  block_cache<opencl_staging_block> kept_;
};

}  // namespace troupe::detail
