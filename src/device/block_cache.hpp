#pragma once

// Memory given back, kept for the next request of the same size. A backend's allocations cost
// far more than reuse: on an H200, cuMemAlloc and cuMemFree take 40-60 us each, and pinning a
// staging block costs more than the copy it serves. Both backends' device memory and staging
// blocks are kept in one of these.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace troupe::detail {

/// Blocks by size, up to `limit` bytes in all. The least recently returned block is released
/// first when the limit is passed; a block of a given size is taken newest first, its pages
/// likeliest still warm. Thread-safe. Releasing is the owner's: `keep` and `release_all` hand
/// blocks to a function, called outside the lock.
template <class Block>
class block_cache {
 public:
  /// Blocks larger than `largest_kept` are released at once.
  explicit block_cache(std::size_t limit, std::size_t largest_kept)
      : limit_(limit), largest_kept_(largest_kept) {}

  /// A kept block of exactly `bytes` bytes, if there is one.
  std::optional<Block> take(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    const auto stamps = by_size_.find(bytes);
    if (stamps == by_size_.end() || stamps->second.empty()) return std::nullopt;
    auto kept = by_age_.extract(stamps->second.back());
    stamps->second.pop_back();
    if (stamps->second.empty()) by_size_.erase(stamps);
    kept_bytes_ -= bytes;
    return std::move(kept.mapped().block);
  }

  /// Keeps `block` of `bytes` bytes, then releases the oldest blocks while over the limit.
  template <class Release>
  void keep(std::size_t bytes, Block block, Release release) noexcept {
    if (bytes > largest_kept_ || !insert(bytes, block)) {
      release(block);
      return;
    }
    while (std::optional<Block> oldest = take_oldest(false)) release(*oldest);
  }

  /// Releases every kept block.
  template <class Release>
  void release_all(Release release) noexcept {
    while (std::optional<Block> oldest = take_oldest(true)) release(*oldest);
  }

 private:
  struct kept_block {
    std::size_t bytes;
    Block block;
  };

  bool insert(std::size_t bytes, const Block& block) noexcept {
    std::lock_guard lock(mutex_);
    try {
      const std::uint64_t stamp = returns_++;
      by_size_[bytes].push_back(stamp);
      try {
        by_age_.emplace(stamp, kept_block{bytes, block});
      } catch (...) {
        const auto stamps = by_size_.find(bytes);
        stamps->second.pop_back();
        if (stamps->second.empty()) by_size_.erase(stamps);
        throw;
      }
    } catch (...) {  // out of memory for the bookkeeping: the caller releases the block instead
      return false;
    }
    kept_bytes_ += bytes;
    return true;
  }

  /// The oldest block, if any is kept and (unless `all`) the limit is passed.
  std::optional<Block> take_oldest(bool all) noexcept {
    std::lock_guard lock(mutex_);
    if (by_age_.empty() || (!all && kept_bytes_ <= limit_)) return std::nullopt;
    auto oldest = by_age_.extract(by_age_.begin());
    const std::size_t bytes = oldest.mapped().bytes;
    const auto stamps = by_size_.find(bytes);
    stamps->second.pop_front();  // the oldest of all is the oldest of its size
    if (stamps->second.empty()) by_size_.erase(stamps);
    kept_bytes_ -= bytes;
    return std::move(oldest.mapped().block);
  }

  const std::size_t limit_;
  const std::size_t largest_kept_;
  std::mutex mutex_;
  std::map<std::uint64_t, kept_block> by_age_;  // by when returned (a counter): oldest first
  std::unordered_map<std::size_t, std::deque<std::uint64_t>> by_size_;  // stamps, oldest first
  std::size_t kept_bytes_ = 0;
  std::uint64_t returns_ = 0;
};

}  // namespace troupe::detail
