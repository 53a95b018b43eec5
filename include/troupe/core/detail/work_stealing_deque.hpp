#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace troupe::detail {

/// Chase-Lev work-stealing deque (Chase & Lev 2005; memory orders after Le et al. 2013, with
/// seq_cst operations in place of fences so ThreadSanitizer can follow it). The owner pushes and
/// takes at the bottom (LIFO, for locality); thieves steal at the top (FIFO). Grows without
/// bound; retired buffers are kept until destruction because a thief may still read one.
template <class T>
class work_stealing_deque {
 public:
  explicit work_stealing_deque(std::int64_t capacity = 256) : buffer_(new ring(capacity)) {
    retired_.emplace_back(buffer_.load(std::memory_order_relaxed));
  }

  /// Owner only.
  void push(T* item) {
    auto b = bottom_.load(std::memory_order_relaxed);
    auto t = top_.load(std::memory_order_acquire);
    auto* a = buffer_.load(std::memory_order_relaxed);
    if (b - t > a->capacity - 1) a = grow(a, t, b);
    a->put(b, item);
    // seq_cst rather than release: the scheduler reads its sleeper count right after a push,
    // and a parking worker announces itself before it checks the deques (store-load order).
    bottom_.store(b + 1, std::memory_order_seq_cst);
  }

  /// Owner only; null if empty.
  T* take() {
    auto b = bottom_.load(std::memory_order_relaxed) - 1;
    auto* a = buffer_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_seq_cst);
    auto t = top_.load(std::memory_order_seq_cst);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    T* item = a->get(b);
    if (t == b) {
      // Last item: race the thieves for it.
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                        std::memory_order_relaxed))
        item = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return item;
  }

  /// Any thread; null if empty or if it lost a race.
  T* steal() {
    auto t = top_.load(std::memory_order_seq_cst);
    auto b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return nullptr;
    auto* a = buffer_.load(std::memory_order_acquire);
    T* item = a->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed))
      return nullptr;
    return item;
  }

  /// Approximate; exact when only the owner runs.
  bool empty() const {
    return bottom_.load(std::memory_order_seq_cst) <= top_.load(std::memory_order_seq_cst);
  }

  std::int64_t size() const {
    auto n = bottom_.load(std::memory_order_relaxed) - top_.load(std::memory_order_relaxed);
    return n > 0 ? n : 0;
  }

 private:
  struct ring {
    explicit ring(std::int64_t n) : capacity(n), mask(n - 1), slots(new std::atomic<T*>[n]) {}
    T* get(std::int64_t i) const { return slots[i & mask].load(std::memory_order_relaxed); }
    void put(std::int64_t i, T* item) { slots[i & mask].store(item, std::memory_order_relaxed); }
    std::int64_t capacity;
    std::int64_t mask;
    std::unique_ptr<std::atomic<T*>[]> slots;
  };

  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto* bigger = new ring(old->capacity * 2);
    for (auto i = t; i < b; ++i) bigger->put(i, old->get(i));
    retired_.emplace_back(bigger);
    buffer_.store(bigger, std::memory_order_release);
    return bigger;
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> buffer_;
  std::vector<std::unique_ptr<ring>> retired_;  // owner only
};

}  // namespace troupe::detail
