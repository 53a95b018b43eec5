#pragma once

#include <atomic>
#include <cstddef>
#include <utility>

namespace troupe::detail {

/// Base for objects whose lifetime is shared through `intrusive_ptr`: one atomic counter, no
/// separate control block, so a shared object costs one allocation.
class ref_counted {
 public:
  ref_counted() = default;
  ref_counted(const ref_counted&) = delete;
  ref_counted& operator=(const ref_counted&) = delete;
  virtual ~ref_counted() = default;

  void add_ref() const noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }

  void release() const noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  bool unique() const noexcept { return refs_.load(std::memory_order_acquire) == 1; }

 private:
  mutable std::atomic<std::size_t> refs_{1};
};

/// Tag: adopt a reference the caller already owns instead of adding one.
struct adopt_ref_t {};
inline constexpr adopt_ref_t adopt_ref{};

/// Smart pointer over any type with `add_ref()` and `release()`.
template <class T>
class intrusive_ptr {
 public:
  // -- constructors ---------------------------------------------------------

  intrusive_ptr() noexcept = default;
  intrusive_ptr(std::nullptr_t) noexcept {}
  explicit intrusive_ptr(T* raw) noexcept : ptr_(raw) {
    if (ptr_) ptr_->add_ref();
  }
  intrusive_ptr(T* raw, adopt_ref_t) noexcept : ptr_(raw) {}
  intrusive_ptr(const intrusive_ptr& other) noexcept : intrusive_ptr(other.ptr_) {}
  intrusive_ptr(intrusive_ptr&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <class U>
  intrusive_ptr(intrusive_ptr<U> other) noexcept : ptr_(other.detach()) {}
  ~intrusive_ptr() {
    if (ptr_) ptr_->release();
  }

  intrusive_ptr& operator=(intrusive_ptr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  // -- properties -----------------------------------------------------------

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  friend bool operator==(const intrusive_ptr& a, const intrusive_ptr& b) {
    return a.ptr_ == b.ptr_;
  }

  // -- operations -----------------------------------------------------------

  /// Gives up ownership without releasing.
  T* detach() noexcept { return std::exchange(ptr_, nullptr); }
  void reset() noexcept { intrusive_ptr{}.swap(*this); }
  void swap(intrusive_ptr& other) noexcept { std::swap(ptr_, other.ptr_); }

 private:
  T* ptr_ = nullptr;
};

template <class T, class... Args>
intrusive_ptr<T> make_counted(Args&&... args) {
  return intrusive_ptr<T>{new T(std::forward<Args>(args)...), adopt_ref};
}

}  // namespace troupe::detail
