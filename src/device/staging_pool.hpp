#pragma once

// Page-locked blocks that a device's copies from and to pageable memory go through, for both
// backends. An asynchronous copy from pageable memory may block the calling thread until the
// device is done (CUDA), and a driver may pin fresh pageable memory for each copy: NVIDIA's
// OpenCL took 610 us for a 4 MB write and 720 us for a read on an H200, against 410 and 450 us
// for memory it had seen before, and a request's vectors are fresh each time. Through a kept
// pinned block a copy costs a host copy that runs beside the DMA, and the caller stays free.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>

#include "device/block_cache.hpp"
#include "device/host_copier.hpp"

namespace troupe::detail {

/// The sizes of one backend's staging blocks.
struct staging_sizes {
  /// The smallest block, a power of two.
  std::size_t smallest_block = 0;
  /// Blocks up to this size are powers of two, larger ones multiples of it; 0: powers of two
  /// throughout.
  std::size_t coarse_block = 0;
  /// Most bytes of blocks kept for reuse.
  std::size_t most_kept = 0;

  /// The size of the block that a copy of `bytes` goes through; throws troupe::error
  /// (errc::out_of_device_memory) naming `device` for a size beyond any host memory.
  std::size_t block_bytes(std::size_t bytes, const std::string& device) const;
};

/// One device's pinned blocks, in the sizes of `Pinning::sizes`, kept for reuse up to its
/// most_kept bytes (block_cache). `Pinning` allocates and frees the blocks, called only when no
/// kept block fits and when one is dropped: made from a `Pinning::owner` (the device's context),
/// it offers `block_type allocate(std::size_t bytes)` (throws troupe::error), `void release(const
/// block_type&) const noexcept` and `const std::string& device_name() const noexcept`; a
/// `block_type` has at least `void* data` and `std::size_t bytes`.
template <class Pinning>
class staging_pool {
 public:
  // -- member types --------------------------------------------------------

  using block_type = typename Pinning::block_type;

  // -- constructors --------------------------------------------------------

  /// Throws troupe::error when `Pinning` cannot be made.
  explicit staging_pool(typename Pinning::owner owner)
      : pinning_(std::move(owner)),
        // A quarter of the cores, at most 4: enough for the host's memory bandwidth, while the
        // scheduler's workers keep theirs.
        copier_(std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u)),
        kept_(sizes.most_kept, sizes.most_kept) {}
  ~staging_pool() {
    kept_.release_all([this](const block_type& kept) { pinning_.release(kept); });
  }
  staging_pool(const staging_pool&) = delete;
  staging_pool& operator=(const staging_pool&) = delete;

  // -- properties ----------------------------------------------------------

  static constexpr staging_sizes sizes = Pinning::sizes;

  // -- operations ----------------------------------------------------------

  /// A block of at least `bytes` bytes; throws troupe::error. A miss pins a new block on the
  /// calling thread (a scheduler worker, for a staged write): host work, like the copy into the
  /// block that follows, and no wait for the device's commands (see the allocators).
  block_type take(std::size_t bytes) {
    const std::size_t block_bytes = sizes.block_bytes(bytes, pinning_.device_name());
    if (std::optional<block_type> kept = kept_.take(block_bytes)) return *kept;
    return pinning_.allocate(block_bytes);
  }
  /// The device must be done with the block. An empty block is ignored.
  void give_back(block_type given) noexcept {
    if (given.data != nullptr)
      kept_.keep(given.bytes, given, [this](const block_type& old) { pinning_.release(old); });
  }

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
  Pinning pinning_;  // first made, last gone: the kept blocks are released through it
  host_copier copier_;
  block_cache<block_type> kept_;
};

}  // namespace troupe::detail
