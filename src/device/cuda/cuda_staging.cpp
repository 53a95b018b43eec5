#include "device/cuda/cuda_staging.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

/// Which of kept_ holds blocks of `block_bytes` (a power of two, at least smallest_block).
std::size_t size_class(std::size_t block_bytes) {
  return static_cast<std::size_t>(std::countr_zero(block_bytes / staging_pool::smallest_block));
}

}  // namespace

staging_pool::staging_pool(std::shared_ptr<cuda_context> context) : context_(std::move(context)) {}

staging_pool::~staging_pool() {
  context_->make_current_quietly();
  for (const std::vector<void*>& blocks : kept_) {
    for (void* block : blocks) context_->driver().cuMemFreeHost(block);
  }
}

staging_block staging_pool::take(std::size_t bytes) {
  const std::size_t largest_block = smallest_block << (size_classes - 1);
  if (bytes > largest_block) {
    throw error(errc::out_of_device_memory, "cannot stage a copy of " + std::to_string(bytes) +
                                                " bytes through pinned memory for device '" +
                                                context_->name + "'");
  }
  const std::size_t block_bytes = std::max(smallest_block, std::bit_ceil(bytes));
  {
    std::lock_guard lock(mutex_);
    std::vector<void*>& blocks = kept_[size_class(block_bytes)];
    if (!blocks.empty()) {
      void* data = blocks.back();
      blocks.pop_back();
      kept_bytes_ -= block_bytes;
      return {data, block_bytes};
    }
  }
  context_->make_current();
  void* data = nullptr;
  const CUresult result = context_->driver().cuMemHostAlloc(&data, block_bytes, 0);
  if (result != CUDA_SUCCESS) {
    context_->fail(result, "cuMemHostAlloc",
                   " (" + std::to_string(block_bytes) + " bytes to stage a copy through)");
  }
  return {data, block_bytes};
}

void staging_pool::give_back(staging_block block) noexcept {
  if (!block.data) return;
  {
    std::lock_guard lock(mutex_);
    // Over the limit, smaller kept blocks make room for this one: a program that moves large
    // arrays keeps reusing its few large blocks instead of pinning them anew each time.
    for (std::size_t c = 0; c < size_class(block.bytes) && kept_bytes_ + block.bytes > most_kept;
         ++c) {
      while (!kept_[c].empty() && kept_bytes_ + block.bytes > most_kept) {
        context_->make_current_quietly();
        context_->driver().cuMemFreeHost(kept_[c].front());
        kept_[c].erase(kept_[c].begin());
        kept_bytes_ -= smallest_block << c;
      }
    }
    if (kept_bytes_ + block.bytes <= most_kept) {
      // push_back may throw bad_alloc; then the block is freed below instead.
      try {
        kept_[size_class(block.bytes)].push_back(block.data);
        kept_bytes_ += block.bytes;
        return;
      } catch (...) {
      }
    }
  }
  context_->make_current_quietly();
  context_->driver().cuMemFreeHost(block.data);
}

}  // namespace troupe::detail
