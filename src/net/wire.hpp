#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// How nodes talk. Small frames travel in aggregation buffers: [u32 bytes][u8 kind][payload].
// A message too large for a buffer is announced by a frame and sent on its own: its header on
// header_tag, then each segment, from where it lies, on segment_tag. Each tag's messages match
// the receives posted for them in order, so several large messages can be on their way at once.

namespace troupe::net::detail {

enum class frame_kind : std::uint8_t {
  message = 1,  ///< [u64 receiver id] envelope and content (see network.cpp)
  large,        ///< [u64 header bytes][u32 segments][u64 bytes of each]; see above
  watch,        ///< [u64 actor id]: report its end to the sender
  down,         ///< [u64 actor id][error]: an actor the receiver watches has ended
};

inline constexpr int buffer_tag = 1;
inline constexpr int header_tag = 2;
inline constexpr int segment_tag = 3;
inline constexpr std::size_t frame_header_bytes = sizeof(std::uint32_t) + 1;
/// Blocks of at least this many bytes are sent from where they lie, as segments; smaller ones
/// are copied into the message (bench-net net_bandwidth decided it).
inline constexpr std::size_t segment_bytes = 32 * 1024;
/// Receiver id of a node's service actor (spawn and lookup by name).
inline constexpr std::uint64_t service_id = 0;

template <class T>
void put(std::byte*& at, T value) noexcept {
  std::memcpy(at, &value, sizeof value);
  at += sizeof value;
}

template <class T>
T get(const std::byte*& at) noexcept {
  T value;
  std::memcpy(&value, at, sizeof value);
  at += sizeof value;
  return value;
}

}  // namespace troupe::net::detail
