#include "net/landing_pool.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "troupe/core/detail/message_codec.hpp"

namespace troupe::net::detail {

namespace {

constexpr std::size_t block_alignment = std::size_t{2} << 20;  // a huge page

std::byte* fresh_block(std::size_t bytes) {
  const std::size_t rounded = (bytes + block_alignment - 1) / block_alignment * block_alignment;
  void* block = std::aligned_alloc(block_alignment, rounded);
  if (block == nullptr) throw std::bad_alloc{};
  troupe::detail::advise_huge_pages(block, rounded);
  return static_cast<std::byte*>(block);
}

}  // namespace

landing_pool& landing_pool::shared() {
  static auto* pool = new landing_pool;  // never destroyed: blocks come back until exit
  return *pool;
}

std::shared_ptr<std::byte> landing_pool::take(std::size_t bytes) {
  if (bytes < small_bytes) return {new std::byte[bytes], [](std::byte* block) { delete[] block; }};
  if (bytes > landing_block_bytes)
    return {fresh_block(bytes), [](std::byte* block) { std::free(block); }};
  std::byte* block = nullptr;
  {
    std::lock_guard guard{mutex_};
    if (!kept_.empty()) {
      block = kept_.back();
      kept_.pop_back();
    }
  }
  if (block == nullptr) {
    block = fresh_block(landing_block_bytes);
    std::memset(block, 0, landing_block_bytes);  // faulted in once, here, not under a transfer
  }
  return {block, [this](std::byte* returned) { give_back(returned); }};
}

void landing_pool::give_back(std::byte* block) noexcept {
  {
    std::lock_guard guard{mutex_};
    if (kept_.size() < max_kept) {
      kept_.push_back(block);
      return;
    }
  }
  std::free(block);
}

}  // namespace troupe::net::detail
