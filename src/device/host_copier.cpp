#include "device/host_copier.hpp"

#include <algorithm>
#include <cstring>

#include "troupe/support/thread_name.hpp"

namespace troupe::detail {

namespace {

/// The smallest part handed out. A copy of two parts or more is split: the caller copies what
/// no helper has taken yet itself, so a sleeping helper costs nothing.
constexpr std::size_t smallest_split = std::size_t{256} << 10;

}  // namespace

std::size_t staging_chunk(std::size_t bytes) noexcept {
  constexpr std::size_t smallest = std::size_t{256} << 10;
  constexpr std::size_t largest = std::size_t{8} << 20;
  return std::clamp((bytes / 4 + smallest - 1) / smallest * smallest, smallest, largest);
}

host_copier::host_copier(unsigned helpers, const char* thread_name)
    : helpers_(helpers), thread_name_(thread_name) {}

host_copier::~host_copier() {
  stop();
}

void host_copier::stop() noexcept {
  std::vector<std::thread> ending;
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
    ending.swap(threads_);
  }
  work_.notify_all();
  // The helpers take what is queued before they end; a caller takes the rest itself (split).
  for (auto& t : ending) t.join();
}

void host_copier::start_helpers() {
  // Under mutex_. Once stopped, the callers copy alone.
  if (!threads_.empty() || helpers_ == 0 || stopping_) return;
  try {
    for (unsigned i = 0; i < helpers_; ++i) {
      threads_.emplace_back([this] { run_helper(); });
      name_thread(threads_.back(), thread_name_);
    }
  } catch (...) {  // no threads to be had: copy alone
    helpers_ = static_cast<unsigned>(threads_.size());
  }
}

void host_copier::copy(void* destination, const void* source, std::size_t bytes) {
  split(static_cast<std::byte*>(destination), static_cast<const std::byte*>(source), bytes);
}

void host_copier::zero(void* destination, std::size_t bytes) {
  split(static_cast<std::byte*>(destination), nullptr, bytes);
}

void host_copier::copy_when_ready(void* destination, const void* source, std::size_t from,
                                  std::size_t to, const destination_gate* ready) {
  auto* to_bytes = static_cast<std::byte*>(destination);
  const auto* from_bytes = static_cast<const std::byte*>(source);
  if (ready == nullptr) return split(to_bytes + from, from_bytes + from, to - from);
  for (std::size_t at = from; at < to;) {
    // A piece at least, unless less is left: all that is ready when the preparation is ahead.
    ready->wait_until_ready(std::min(to, at + destination_gate::piece));
    const std::size_t end = std::min(to, ready->ready());
    split(to_bytes + at, from_bytes + at, end - at);
    at = end;
  }
}

void host_copier::copy_or_zero(const part& p) {
  if (p.bytes == 0) return;  // memcpy and memset want valid pointers even then
  if (p.source != nullptr) {
    std::memcpy(p.destination, p.source, p.bytes);
  } else {
    std::memset(p.destination, 0, p.bytes);
  }
}

void host_copier::split(std::byte* destination, const std::byte* source, std::size_t bytes) {
  if (bytes < 2 * smallest_split || helpers_ == 0) {
    copy_or_zero({destination, source, bytes, nullptr});
    return;
  }
  const std::size_t parts = std::min<std::size_t>(helpers_ + 1, bytes / smallest_split);
  const std::size_t share = (bytes / parts + 63) / 64 * 64;  // cache-line aligned parts
  const auto part_at = [&](std::size_t at, std::atomic<std::size_t>* remaining) {
    return part{destination + at, source != nullptr ? source + at : nullptr,
                std::min(share, bytes - at), remaining};
  };
  std::atomic<std::size_t> remaining{0};
  std::size_t queued_up_to = share;  // the caller does what lies beyond itself
  {
    std::lock_guard lock{mutex_};
    start_helpers();
    try {
      for (; queued_up_to < bytes; queued_up_to += share) {
        parts_.push_back(part_at(queued_up_to, &remaining));
        remaining.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (...) {  // out of memory for the queue: fewer parts
    }
    queued_.store(parts_.size(), std::memory_order_release);
    ++copies_;
  }
  work_.notify_all();
  copy_or_zero(part_at(0, nullptr));
  if (queued_up_to < bytes) {
    copy_or_zero({destination + queued_up_to, source != nullptr ? source + queued_up_to : nullptr,
                  bytes - queued_up_to, nullptr});
  }
  // Help with what is still queued (any caller's), then wait for the parts in flight: they are
  // being copied, so spinning ends within a part's time, where sleeping would add a wake-up (40
  // to 80 us on an H200 host, for the completion thread that copies a staged read out).
  for (;;) {
    std::optional<part> next = take_part();
    if (!next) break;
    finish(*next);
  }
  while (remaining.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

std::optional<host_copier::part> host_copier::take_part() {
  std::lock_guard lock{mutex_};
  return pop_part();
}

std::optional<host_copier::part> host_copier::pop_part() {
  if (parts_.empty()) return std::nullopt;
  part next = parts_.front();
  parts_.pop_front();
  queued_.store(parts_.size(), std::memory_order_release);
  return next;
}

void host_copier::finish(const part& p) {
  copy_or_zero(p);
  p.remaining->fetch_sub(1, std::memory_order_acq_rel);
}

void host_copier::run_helper() {
  using clock = std::chrono::steady_clock;
  auto awake_until = clock::time_point{};
  for (;;) {
    while (queued_.load(std::memory_order_acquire) == 0 && clock::now() < awake_until)
      std::this_thread::yield();
    std::optional<part> next;
    {
      std::unique_lock lock{mutex_};
      const std::size_t seen = copies_;
      work_.wait(lock, [&] { return stopping_ || !parts_.empty() || copies_ != seen; });
      next = pop_part();
      if (!next && stopping_) return;
    }
    if (next) finish(*next);
    // Also when the caller had copied everything by the time this helper woke: the next
    // chunk of a staged read then finds it awake.
    awake_until = clock::now() + linger;
  }
}

}  // namespace troupe::detail
