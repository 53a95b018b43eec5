#include "device/host_copier.hpp"

#include <algorithm>
#include <cstring>

namespace troupe::detail {

namespace {

/// The smallest part handed out. A copy of two parts or more is split: the caller copies what
/// no helper has taken yet itself, so a sleeping helper costs nothing, and a staged copy of
/// 1 MB chunks (a 4 MB read) then moves as fast as its DMA (H200, bench-kernel matmul_iterated).
constexpr std::size_t smallest_split = std::size_t{256} << 10;

}  // namespace

std::size_t staging_chunk(std::size_t bytes) noexcept {
  constexpr std::size_t smallest = std::size_t{256} << 10;
  constexpr std::size_t largest = std::size_t{8} << 20;
  return std::clamp((bytes / 4 + smallest - 1) / smallest * smallest, smallest, largest);
}

host_copier::host_copier(unsigned helpers) : helpers_(helpers) {}

host_copier::~host_copier() {
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
}

void host_copier::start_helpers() {
  // Under mutex_.
  if (!threads_.empty() || helpers_ == 0) return;
  try {
    for (unsigned i = 0; i < helpers_; ++i) threads_.emplace_back([this] { run_helper(); });
  } catch (...) {  // no threads to be had: copy alone
    helpers_ = static_cast<unsigned>(threads_.size());
  }
}

void host_copier::copy(void* destination, const void* source, std::size_t bytes) {
  if (bytes == 0) return;  // memcpy wants valid pointers even then
  if (bytes < 2 * smallest_split || helpers_ == 0) {
    std::memcpy(destination, source, bytes);
    return;
  }
  auto* to = static_cast<std::byte*>(destination);
  const auto* from = static_cast<const std::byte*>(source);
  std::size_t parts = std::min<std::size_t>(helpers_ + 1, bytes / smallest_split);
  std::size_t share = (bytes / parts + 63) / 64 * 64;  // cache-line aligned parts
  std::size_t remaining = 0;
  {
    std::lock_guard lock{mutex_};
    start_helpers();
    for (std::size_t at = share; at < bytes; at += share) {
      parts_.push_back({to + at, from + at, std::min(share, bytes - at), &remaining});
      ++remaining;
    }
  }
  work_.notify_all();
  std::memcpy(to, from, std::min(share, bytes));
  // Help with what is still queued (any copy's), then wait for the parts in flight.
  std::unique_lock lock{mutex_};
  while (remaining != 0) {
    if (!parts_.empty()) {
      part next = parts_.front();
      parts_.pop_front();
      lock.unlock();
      finish(next);
      lock.lock();
    } else {
      done_.wait(lock);
    }
  }
}

void host_copier::finish(const part& p) {
  std::memcpy(p.destination, p.source, p.bytes);
  {
    std::lock_guard lock{mutex_};
    --*p.remaining;
  }
  done_.notify_all();
}

void host_copier::run_helper() {
  for (;;) {
    part next{};
    {
      std::unique_lock lock{mutex_};
      work_.wait(lock, [&] { return stopping_ || !parts_.empty(); });
      if (parts_.empty()) return;
      next = parts_.front();
      parts_.pop_front();
    }
    finish(next);
  }
}

}  // namespace troupe::detail
