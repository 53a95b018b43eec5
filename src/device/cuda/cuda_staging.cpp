#include "device/cuda/cuda_staging.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <thread>

#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

/// Which of kept_ holds blocks of `block_bytes` (a power of two, at least smallest_block).
std::size_t size_class(std::size_t block_bytes) {
  return static_cast<std::size_t>(std::countr_zero(block_bytes / staging_pool::smallest_block));
}

}  // namespace

staging_pool::staging_pool(std::shared_ptr<cuda_context> context)
    : context_(std::move(context)),
      // A quarter of the cores, at most 4: enough for the host's memory bandwidth, while the
      // scheduler's workers keep theirs.
      copier_(std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u)) {}

staging_pool::~staging_pool() {
  context_->make_current_quietly();
  for (const std::vector<kept_block>& blocks : kept_) {
    for (const kept_block& block : blocks) context_->driver().cuMemFreeHost(block.data);
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
    std::vector<kept_block>& blocks = kept_[size_class(block_bytes)];
    if (!blocks.empty()) {
      void* data = blocks.back().data;
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
  std::vector<void*> evicted;
  {
    std::lock_guard lock(mutex_);
    try {
      kept_[size_class(block.bytes)].push_back({block.data, ++returns_});
      kept_bytes_ += block.bytes;
      block.data = nullptr;
      // Over the limit, the blocks returned longest ago go, whatever their size: a program
      // keeps reusing the few blocks its current copies need.
      while (kept_bytes_ > most_kept) {
        std::size_t oldest = size_classes;
        for (std::size_t c = 0; c < size_classes; ++c) {
          if (!kept_[c].empty() && (oldest == size_classes ||
                                    kept_[c].front().returned < kept_[oldest].front().returned))
            oldest = c;
        }
        evicted.push_back(kept_[oldest].front().data);
        kept_[oldest].erase(kept_[oldest].begin());
        kept_bytes_ -= smallest_block << oldest;
      }
    } catch (...) {  // out of memory for the bookkeeping: free instead of keeping
    }
  }
  if (block.data) evicted.push_back(block.data);
  if (evicted.empty()) return;
  context_->make_current_quietly();
  for (void* data : evicted) context_->driver().cuMemFreeHost(data);
}

}  // namespace troupe::detail
