// The remote device protocol's framing and field encoding (docs/remote-protocol.md).
// Shared by the server and the ICD client driver, so it uses nothing from the rest of troupe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace troupe::remote {

static_assert(std::endian::native == std::endian::little,
              "the remote protocol is little-endian on the wire and is encoded by memcpy");

/// "TRPE", the first field of every handshake.
inline constexpr std::uint32_t protocol_magic = 0x45505254;
/// Bumped on any change to a frame's layout; client and server must agree exactly.
inline constexpr std::uint16_t protocol_version = 4;
/// Largest payload of a frame before the handshake: a handshake is a few hundred bytes.
inline constexpr std::uint32_t max_handshake_payload = 4096;
/// Largest bulk field of a frame (a read's reply, a write's data, an info value).
inline constexpr std::uint32_t max_chunk = 64u << 20;
/// The pieces a large read or write is cut into: small enough that the server copies one piece
/// to the device while the next is still on the wire.
inline constexpr std::uint32_t transfer_piece = 8u << 20;
inline constexpr std::uint32_t max_frame_payload = max_chunk + 64 * 1024;
/// What a build may send of the client's -I folders (the files its sources include): it
/// crosses in the build's frame, and the server writes it to disk for the compiler.
inline constexpr std::uint32_t max_include_files = 4096;
inline constexpr std::uint32_t max_include_bytes = 32u << 20;

/// Header flag: the sender waits for a reply frame. Without it, the call is pipelined and a
/// failure is kept as the connection's deferred error.
inline constexpr std::uint16_t flag_reply = 1;
/// Header flag, with flag_reply, on a read: the server enqueues it without waiting and replies
/// once the read completes, serving later frames meanwhile. Its reply may come after replies
/// to later frames; the client tells replies apart by their sequence.
inline constexpr std::uint16_t flag_reply_on_completion = 2;

/// The fixed 16-byte header in front of every frame's payload.
struct frame_header {
  std::uint32_t payload_size = 0;
  std::uint16_t opcode = 0;
  std::uint16_t flags = 0;
  std::uint32_t sequence = 0;
  std::uint32_t reserved = 0;
};
static_assert(sizeof(frame_header) == 16 && std::is_trivially_copyable_v<frame_header>);

/// A frame that breaks the protocol. The server closes that connection only.
class decode_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Appends fields to a payload. Bulk data can be left outside the buffer (`tail`), so that
/// it is sent straight from the caller's memory.
class writer {
 public:
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T> writer& put(T value) {
    append(&value, sizeof(T));
    return *this;
  }

  /// A length-prefixed byte string, copied into the payload.
  writer& put_bytes(const void* data, std::size_t size) {
    put<std::uint64_t>(size);
    append(data, size);
    return *this;
  }
  writer& put_string(std::string_view text) { return put_bytes(text.data(), text.size()); }

  /// A length-prefixed array of fixed-size values.
  template <class T>
  requires std::is_arithmetic_v<T> writer& put_array(std::span<const T> values) {
    return put_bytes(values.data(), values.size_bytes());
  }

  /// A length-prefixed byte string whose bytes follow the payload buffer, sent from `data`.
  /// At most one tail per frame, and it must be the last field.
  writer& put_tail(const void* data, std::size_t size) {
    put<std::uint64_t>(size);
    tail_ = data;
    tail_size_ = size;
    return *this;
  }

  /// Bytes already encoded by another writer (its head only).
  writer& put_raw(std::span<const std::byte> bytes) {
    append(bytes.data(), bytes.size());
    return *this;
  }
  /// Sends `size` bytes from `data` after the buffer, without a length (already encoded).
  void set_tail(const void* data, std::size_t size) {
    tail_ = data;
    tail_size_ = size;
  }

  [[nodiscard]] std::span<const std::byte> head() const { return buffer_; }
  [[nodiscard]] const void* tail() const { return tail_; }
  [[nodiscard]] std::size_t tail_size() const { return tail_size_; }
  [[nodiscard]] std::size_t size() const { return buffer_.size() + tail_size_; }

 private:
  // resize and memcpy, not insert: GCC 12 warns falsely about insert of a few bytes.
  void append(const void* data, std::size_t size) {
    if (size == 0) return;
    std::size_t at = buffer_.size();
    buffer_.resize(at + size);
    std::memcpy(buffer_.data() + at, data, size);
  }

  std::vector<std::byte> buffer_;
  const void* tail_ = nullptr;
  std::size_t tail_size_ = 0;
};

/// Reads fields from a received payload; every read is bounds-checked and a short or
/// inconsistent payload throws decode_error, naming the field's position.
class reader {
 public:
  explicit reader(std::span<const std::byte> payload) : data_(payload) {}

  template <class T>
  requires std::is_arithmetic_v<T> T get() {
    need(sizeof(T), "a number");
    T value;
    std::memcpy(&value, data_.data() + position_, sizeof(T));
    position_ += sizeof(T);
    return value;
  }

  /// A length-prefixed byte string, as a view into the payload.
  std::span<const std::byte> get_bytes() {
    const auto size = get<std::uint64_t>();
    if (size > data_.size() - position_) {
      fail("a byte string of " + std::to_string(size) + " bytes");
    }
    auto bytes = data_.subspan(position_, static_cast<std::size_t>(size));
    position_ += static_cast<std::size_t>(size);
    return bytes;
  }
  std::string get_string() {
    auto bytes = get_bytes();
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }

  /// A length-prefixed array of T; the byte length must be a multiple of sizeof(T).
  template <class T>
  requires std::is_arithmetic_v<T> std::vector<T> get_array(std::size_t max_count = SIZE_MAX) {
    auto bytes = get_bytes();
    if (bytes.size() % sizeof(T) != 0 || bytes.size() / sizeof(T) > max_count) {
      fail("an array of " + std::to_string(bytes.size()) + " bytes (element size " +
           std::to_string(sizeof(T)) + ")");
    }
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }

  /// Throws unless every byte was read: trailing garbage is a protocol error too.
  void expect_end() const {
    if (position_ != data_.size()) {
      throw decode_error("frame has " + std::to_string(data_.size() - position_) +
                         " unread bytes after its last field");
    }
  }

  [[nodiscard]] std::size_t remaining() const { return data_.size() - position_; }

 private:
  void need(std::size_t size, const char* what) const {
    if (size > data_.size() - position_) fail(what);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw decode_error("frame ends early: expected " + what + " at byte " +
                       std::to_string(position_) + " of " + std::to_string(data_.size()));
  }

  std::span<const std::byte> data_;
  std::size_t position_ = 0;
};

}  // namespace troupe::remote
