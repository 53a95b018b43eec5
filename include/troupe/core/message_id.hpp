#pragma once

#include <cstdint>

namespace troupe {

/// Identifies a message for request/response matching. Async messages have id 0; a request
/// carries a sequence number with the request bit; its response carries the same number with
/// the response bit.
class message_id {
 public:
  constexpr message_id() noexcept = default;

  static constexpr message_id make_request(std::uint64_t sequence) noexcept {
    return message_id{(sequence & sequence_mask) | request_bit};
  }

  /// The id whose value() is `value` (as read from the wire).
  static constexpr message_id from_value(std::uint64_t value) noexcept { return message_id{value}; }

  constexpr bool is_async() const noexcept { return value_ == 0; }
  constexpr bool is_request() const noexcept { return (value_ & request_bit) != 0; }
  constexpr bool is_response() const noexcept { return (value_ & response_bit) != 0; }
  constexpr std::uint64_t sequence() const noexcept { return value_ & sequence_mask; }

  constexpr message_id response_id() const noexcept {
    return message_id{sequence() | response_bit};
  }

  constexpr std::uint64_t value() const noexcept { return value_; }
  friend constexpr bool operator==(message_id, message_id) noexcept = default;

 private:
  static constexpr std::uint64_t request_bit = std::uint64_t{1} << 62;
  static constexpr std::uint64_t response_bit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t sequence_mask = request_bit - 1;

  explicit constexpr message_id(std::uint64_t value) noexcept : value_(value) {}

  std::uint64_t value_ = 0;
};

}  // namespace troupe
