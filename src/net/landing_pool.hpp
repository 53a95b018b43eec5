#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace troupe::net::detail {

/// The size of the host blocks that bulk transfers to and from remote devices move in: a
/// larger transfer goes as several, so that one block's network transfer overlaps the next
/// one's copy to or from the device.
inline constexpr std::size_t landing_block_bytes = std::size_t{4} << 20;

/// Host blocks that arriving bytes land in, kept for reuse: a fresh block is zeroed and faulted
/// in page by page while MPI writes into it (see advise_huge_pages); a kept one is ready.
class landing_pool {
 public:
  /// The process's pool (blocks outlive any one actor system: answers may still be in flight).
  static landing_pool& shared();

  /// A block of at least `bytes`, returned here when the last owner lets it go. Blocks of less
  /// than small_bytes or more than landing_block_bytes are plain allocations, not kept.
  std::shared_ptr<std::byte> take(std::size_t bytes);

  static constexpr std::size_t small_bytes = 64 * 1024;
  /// Blocks kept for reuse at most; more are freed when let go.
  static constexpr std::size_t max_kept = 16;

 private:
  landing_pool() = default;
  void give_back(std::byte* block) noexcept;

  std::mutex mutex_;
  std::vector<std::byte*> kept_;
};

}  // namespace troupe::net::detail
