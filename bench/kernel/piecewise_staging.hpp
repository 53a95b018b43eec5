// How the tuned raw sides of bench-kernel copy between pageable matrices and the device: piece
// by piece through two pinned blocks in turn, so that the memcpy into (or out of) one block runs
// beside the DMA of the other, as troupe's staging does. Copying a whole matrix into one pinned
// buffer before its DMA starts was slower than plain pageable copies on an H100 from N = 2000 on.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <utility>

namespace troupe::bench::kernel_bench {

/// `Copies` is one backend's side: made from the block size and its own arguments, it has a
/// `target` type (the device buffer), `char* block(slot)`, `write(slot, target, at, length)` and
/// `read(slot, target, at, length)` (asynchronous DMA of one piece between the block and the
/// target at byte `at`), and `wait(slot)` (until the slot's last DMA is done).
template <class Copies>
class piecewise_staging {
 public:
  static constexpr std::size_t piece = std::size_t{4} << 20;

  template <class... Arguments>
  explicit piecewise_staging(Arguments&&... arguments)
      : copies_(piece, std::forward<Arguments>(arguments)...) {}

  void upload(typename Copies::target to, const void* from, std::size_t bytes) {
    const auto* source = static_cast<const char*>(from);
    for (std::size_t at = 0; at < bytes; at += piece) {
      const std::size_t slot = free_slot(), length = std::min(piece, bytes - at);
      std::memcpy(copies_.block(slot), source + at, length);
      copies_.write(slot, to, at, length);
    }
  }

  /// Returns once `bytes` are in `to`.
  void download(void* to, typename Copies::target from, std::size_t bytes) {
    auto* target = static_cast<char*>(to);
    struct piece_in_block {
      std::size_t at, length, slot;
    };
    std::optional<piece_in_block> before;  // read, not yet copied out
    auto copy_out = [&](const piece_in_block& done) {
      copies_.wait(done.slot);
      std::memcpy(target + done.at, copies_.block(done.slot), done.length);
    };
    for (std::size_t at = 0; at < bytes; at += piece) {
      const std::size_t slot = free_slot(), length = std::min(piece, bytes - at);
      copies_.read(slot, from, at, length);
      if (before) copy_out(*before);
      before = piece_in_block{at, length, slot};
    }
    if (before) copy_out(*before);
  }

 private:
  // The next block in turn, once the copy that used it last is done.
  std::size_t free_slot() {
    const std::size_t slot = next_++ % 2;
    if (next_ > 2) copies_.wait(slot);
    return slot;
  }

  Copies copies_;
  std::size_t next_ = 0;
};

}  // namespace troupe::bench::kernel_bench
