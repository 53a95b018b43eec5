#pragma once

#include <atomic>
#include <cstddef>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "troupe/async/error.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {

namespace detail {

struct message_codec;

/// How messages of `Ts...` cross nodes (defined in detail/message_codec.hpp).
template <class... Ts>
const message_codec* codec_of() noexcept;

/// The element types of a message. One static instance exists per type list, so two messages
/// (or a message and a handler) have the same types exactly when their pointers are equal.
struct type_list_info {
  std::size_t size;
  const std::type_info* const* types;
  /// How messages of these types cross nodes.
  const message_codec* (*codec)() noexcept;
};

template <class... Ts>
inline constexpr const std::type_info* type_array[] = {&typeid(Ts)..., nullptr};

template <class... Ts>
inline constexpr type_list_info type_list_of{sizeof...(Ts), type_array<Ts...>, &codec_of<Ts...>};

/// Readable C++ type names, e.g. "(int, std::string)", for error messages.
std::string type_names(const type_list_info& types);
std::string type_name(const std::type_info& type);

/// Memory shared by a mailbox element and the message data placed right behind it, so a send
/// costs one allocation; freed when both are done (the data may outlive its element when a
/// message is forwarded).
class shared_block {
 public:
  void release() noexcept {
    if (parties_.fetch_sub(1, std::memory_order_acq_rel) == 1) ::operator delete(this);
  }

 private:
  std::atomic<int> parties_{2};
};

class message_data {
 public:
  explicit message_data(const type_list_info* types) noexcept : types_(types) {}
  message_data(const message_data&) = delete;
  message_data& operator=(const message_data&) = delete;
  virtual ~message_data() = default;

  const type_list_info* types() const noexcept { return types_; }
  virtual void* at(std::size_t index) noexcept = 0;
  /// A deep copy, for copy-on-write; throws if an element type cannot be copied.
  virtual message_data* copy() const = 0;

  // -- reference counting (for intrusive_ptr) ------------------------------

  void add_ref() const noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (auto* block = block_) {
      this->~message_data();
      block->release();
    } else {
      delete this;
    }
  }
  bool unique() const noexcept { return refs_.load(std::memory_order_acquire) == 1; }

  /// Marks data constructed inside a shared block.
  void set_block(shared_block* block) noexcept { block_ = block; }

 private:
  mutable std::atomic<std::size_t> refs_{1};
  const type_list_info* types_;
  shared_block* block_ = nullptr;
};

template <class... Ts>
class typed_message_data final : public message_data {
 public:
  template <class... Args>
  explicit typed_message_data(Args&&... args)
      : message_data(&type_list_of<Ts...>), values_(std::forward<Args>(args)...) {}

  void* at(std::size_t index) noexcept override {
    return at_impl(index, std::index_sequence_for<Ts...>{});
  }

  message_data* copy() const override {
    if constexpr ((std::is_copy_constructible_v<Ts> && ...)) {
      return new typed_message_data(*this);
    } else {
      throw error(errc::invalid_argument,
                  "message: cannot copy a shared message of " + type_names(type_list_of<Ts...>) +
                      ", which holds a type that is not copyable; send it to one receiver only");
    }
  }

 private:
  typed_message_data(const typed_message_data& other)
      : message_data(other.types()), values_(other.values_) {}

  template <std::size_t... Is>
  void* at_impl(std::size_t index, std::index_sequence<Is...>) noexcept {
    void* pointers[] = {static_cast<void*>(&std::get<Is>(values_))..., nullptr};
    return pointers[index];
  }

  std::tuple<Ts...> values_;
};

template <class T>
using strip_t = std::remove_cvref_t<T>;

}  // namespace detail

/// A dynamically typed, immutable-when-shared tuple of values: what actors exchange. Copies
/// share the data; a handler that takes an element by non-const reference gets a private copy
/// first if the data is shared (copy on write).
class message {
 public:
  // -- constructors ---------------------------------------------------------

  message() noexcept = default;
  explicit message(detail::intrusive_ptr<detail::message_data> data) noexcept
      : data_(std::move(data)) {}

  // -- properties -----------------------------------------------------------

  std::size_t size() const noexcept { return data_ ? data_->types()->size : 0; }
  bool empty() const noexcept { return size() == 0; }

  /// The identity of the element type list (see detail::type_list_of).
  const detail::type_list_info* types() const noexcept {
    return data_ ? data_->types() : &detail::type_list_of<>;
  }

  /// True if the elements are exactly `Ts...` (after removing references and const).
  template <class... Ts>
  bool match() const noexcept {
    return types() == &detail::type_list_of<detail::strip_t<Ts>...>;
  }

  /// Element `index` as `T`; throws a clear error on a wrong type or index.
  template <class T>
  const T& get_as(std::size_t index) const {
    check(index, typeid(T));
    return *static_cast<const T*>(data_->at(index));
  }

  /// "(int, std::string)": the element types, for error messages.
  std::string type_names() const { return detail::type_names(*types()); }

  // -- operations -----------------------------------------------------------

  /// Element `index` for writing; copies the data first if it is shared.
  void* mutable_at(std::size_t index) {
    if (!data_->unique())
      data_ = detail::intrusive_ptr<detail::message_data>{data_->copy(), detail::adopt_ref};
    return data_->at(index);
  }

  /// True if no other message shares the data, so elements may be moved out.
  bool unique() const noexcept { return data_ && data_->unique(); }

  const void* at(std::size_t index) const noexcept { return data_->at(index); }

 private:
  void check(std::size_t index, const std::type_info& wanted) const;

  detail::intrusive_ptr<detail::message_data> data_;
};

/// Makes a message holding copies (or moves) of `xs`.
template <class... Ts>
message make_message(Ts&&... xs) {
  if constexpr (sizeof...(Ts) == 0) {
    return message{};
  } else {
    using data = detail::typed_message_data<detail::strip_t<Ts>...>;
    return message{detail::intrusive_ptr<detail::message_data>{new data(std::forward<Ts>(xs)...),
                                                               detail::adopt_ref}};
  }
}

}  // namespace troupe

// Every message type gets its codec, so that any message can be offered to another node.
#include "troupe/core/detail/message_codec.hpp"
