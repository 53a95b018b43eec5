#include "device/cuda/cuda_staging.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <thread>

#include "troupe/async/error.hpp"

namespace troupe::detail {

staging_pool::staging_pool(std::shared_ptr<cuda_context> context)
    : context_(std::move(context)),
      // A quarter of the cores, at most 4: enough for the host's memory bandwidth, while the
      // scheduler's workers keep theirs.
      copier_(std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u)),
      kept_(most_kept, most_kept) {}

staging_pool::~staging_pool() {
  kept_.release_all([this](void* data) { release(data); });
}

staging_block staging_pool::take(std::size_t bytes) {
  if (bytes > std::size_t{1} << 55) {  // far beyond any host memory; bit_ceil would overflow
    throw error(errc::out_of_device_memory, "cannot stage a copy of " + std::to_string(bytes) +
                                                " bytes through pinned memory for device '" +
                                                context_->name + "'");
  }
  const std::size_t block_bytes = std::max(smallest_block, std::bit_ceil(bytes));
  if (const std::optional<void*> kept = kept_.take(block_bytes)) return {*kept, block_bytes};
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
  if (block.data) kept_.keep(block.bytes, block.data, [this](void* data) { release(data); });
}

void staging_pool::release(void* data) const noexcept {
  context_->make_current_quietly();
  context_->driver().cuMemFreeHost(data);
}

}  // namespace troupe::detail
