#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "troupe/pgas/detail/engine.hpp"

namespace troupe::pgas {

/// How a message type crosses between PEs. Fixed-size messages are trivially copyable values;
/// variable-size ones are std::vector<T> (sent as a span, received as std::span<const T>) and
/// std::string (received as std::string_view), read in place from the receive buffer.
template <class Msg>
struct message_traits {
  static_assert(std::is_trivially_copyable_v<Msg>,
                "troupe::pgas: a message type must be trivially copyable (its bytes are shipped "
                "to another process), or std::vector<T> or std::string for variable-size messages");
  using argument = const Msg&;
  using view = const Msg&;
  static std::size_t bytes(argument message) noexcept { return sizeof message; }
  static void write(std::byte* out, argument message) noexcept {
    std::memcpy(out, &message, sizeof message);
  }
  template <class Handler>
  static void deliver(Handler& handler, const std::byte* payload, int from) {
    Msg message;
    std::memcpy(&message, payload, sizeof message);
    handler(static_cast<const Msg&>(message), from);
  }
};

template <class T>
struct message_traits<std::vector<T>> {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= detail::record_alignment,
                "troupe::pgas: the elements of a variable-size message must be trivially "
                "copyable and aligned to at most 8 bytes");
  using argument = std::span<const T>;
  using view = std::span<const T>;
  static std::size_t bytes(argument message) noexcept { return message.size_bytes(); }
  static void write(std::byte* out, argument message) noexcept {
    if (!message.empty()) std::memcpy(out, message.data(), message.size_bytes());
  }
  template <class Handler>
  static void deliver(Handler& handler, const std::byte* payload, std::size_t size, int from) {
    // Records start 8-byte aligned, so the elements can be read in place.
    handler(view{reinterpret_cast<const T*>(payload), size / sizeof(T)}, from);
  }
};

template <>
struct message_traits<std::string> {
  using argument = std::string_view;
  using view = std::string_view;
  static std::size_t bytes(argument message) noexcept { return message.size(); }
  static void write(std::byte* out, argument message) noexcept {
    if (!message.empty()) std::memcpy(out, message.data(), message.size());
  }
  template <class Handler>
  static void deliver(Handler& handler, const std::byte* payload, std::size_t size, int from) {
    handler(view{reinterpret_cast<const char*>(payload), size}, from);
  }
};

/// Whether `Msg` is sent with a size of its own.
template <class Msg>
inline constexpr bool is_variable_size = false;
template <class T>
inline constexpr bool is_variable_size<std::vector<T>> = true;
template <>
inline constexpr bool is_variable_size<std::string> = true;

}  // namespace troupe::pgas
