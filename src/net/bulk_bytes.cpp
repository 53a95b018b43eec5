#include "net/bulk_bytes.hpp"

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "net/landing_pool.hpp"

namespace troupe::net::detail {

namespace {

/// Destinations that reads' answers arrive in, by landing number. Process-wide: the numbers
/// are, and answers are decoded on the transport's thread, outside any actor.
class landings {
 public:
  static landings& shared() {
    static auto* places = new landings;  // never destroyed: answers may arrive until exit
    return *places;
  }

  std::uint64_t reserve(std::span<std::byte> destination) {
    const auto landing = next_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard guard{mutex_};
    places_.emplace(landing, destination);
    return landing;
  }

  // The reserved place, if it holds exactly `size` bytes; ends the reservation.
  std::byte* take(std::uint64_t landing, std::size_t size) {
    std::lock_guard guard{mutex_};
    auto it = places_.find(landing);
    if (it == places_.end()) return nullptr;
    auto place = it->second;
    places_.erase(it);
    return place.size() == size ? place.data() : nullptr;
  }

  void forget(std::uint64_t landing) noexcept {
    std::lock_guard guard{mutex_};
    places_.erase(landing);
  }

 private:
  std::atomic<std::uint64_t> next_{1};
  std::mutex mutex_;
  std::unordered_map<std::uint64_t, std::span<std::byte>> places_;
};

}  // namespace

bulk_bytes bulk_bytes::borrow(const void* data, std::size_t size) {
  bulk_bytes result;
  result.data_ = static_cast<std::byte*>(const_cast<void*>(data));  // only ever read
  result.size_ = size;
  return result;
}

bulk_bytes bulk_bytes::copy_of(const void* data, std::size_t size) {
  auto result = block(size, 0);
  if (size != 0) std::memcpy(result.data_, data, size);
  return result;
}

bulk_bytes bulk_bytes::block(std::size_t size, std::uint64_t landing) {
  bulk_bytes result;
  result.landing_ = landing;
  result.size_ = size;
  if (size != 0) {
    result.owned_ = landing_pool::shared().take(size);
    result.data_ = result.owned_.get();
  }
  return result;
}

std::uint64_t bulk_bytes::expect(std::span<std::byte> destination) {
  return landings::shared().reserve(destination);
}

void bulk_bytes::forget(std::uint64_t landing) noexcept {
  landings::shared().forget(landing);
}

void bulk_bytes::land(std::uint64_t size) {
  if (size > (std::uint64_t{1} << 48))
    throw error(errc::invalid_argument,
                "bulk bytes: a block of " + std::to_string(size) + " bytes");
  size_ = static_cast<std::size_t>(size);
  owned_.reset();
  data_ = nullptr;
  if (landing_ != 0) data_ = landings::shared().take(landing_, size_);
  if (data_ == nullptr && size_ != 0) {
    owned_ = landing_pool::shared().take(size_);
    data_ = owned_.get();
  }
}

}  // namespace troupe::net::detail
