#pragma once

// Page-locked blocks that copies from and to pageable memory go through. An asynchronous copy
// from pageable memory may block the calling thread until the device is done; staging through
// pinned memory keeps the caller free and the copy truly asynchronous.

#include <cstddef>
#include <memory>

#include "device/block_cache.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/host_copier.hpp"

namespace troupe::detail {

/// A pinned block lent by a staging_pool.
struct staging_block {
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// One device's pinned blocks, in power-of-two sizes from 64 KiB, up to 1 GiB kept for reuse
/// (block_cache).
class staging_pool {
 public:
  static constexpr std::size_t smallest_block = std::size_t{64} << 10;
  static constexpr std::size_t most_kept = std::size_t{1} << 30;

  explicit staging_pool(std::shared_ptr<cuda_context> context);
  ~staging_pool();
  staging_pool(const staging_pool&) = delete;
  staging_pool& operator=(const staging_pool&) = delete;

  /// A block of at least `bytes` bytes; throws troupe::error.
  staging_block take(std::size_t bytes);
  /// The device must be done with the block.
  void give_back(staging_block block) noexcept;

  /// Copies into or out of a block with several threads when large.
  void copy(void* destination, const void* source, std::size_t bytes) {
    copier_.copy(destination, source, bytes);
  }
  /// copy() of bytes [from, to), once `ready` has opened each piece (null: all is open).
  void copy_when_ready(void* destination, const void* source, std::size_t from, std::size_t to,
                       const destination_gate* ready) {
    copier_.copy_when_ready(destination, source, from, to, ready);
  }

 private:
  void release(void* data) const noexcept;

  std::shared_ptr<cuda_context> context_;
  host_copier copier_;
  block_cache<void*> kept_;
};

}  // namespace troupe::detail
