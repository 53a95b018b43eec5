#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace troupe::pgas {
class world;
}

namespace troupe::pgas::detail {

class mailbox_set;

/// Every record in an aggregation buffer starts with this header; the payload follows, padded so
/// that the next record starts 8-byte aligned.
struct record_header {
  std::uint32_t key;    ///< the selector's id times 256, plus the mailbox
  std::uint32_t bytes;  ///< the payload's size
};
inline constexpr std::size_t record_alignment = 8;
inline constexpr std::size_t max_mailboxes = 256;

constexpr std::size_t padded(std::size_t bytes) noexcept {
  return (bytes + record_alignment - 1) & ~(record_alignment - 1);
}

/// The buffer of messages on their way to one PE.
struct outgoing {
  std::byte* data = nullptr;
  std::size_t used = 0;
};

/// The part of a world that moves messages: aggregation buffers per destination, receives,
/// progress and the selectors attached to it. Defined in src/pgas; MPI stays out of the headers.
class engine {
 public:
  virtual ~engine() = default;

  int pe() const noexcept { return pe_; }
  int npes() const noexcept { return npes_; }
  std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  /// The largest payload one message may have.
  std::size_t max_payload() const noexcept { return buffer_bytes_ - sizeof(record_header); }
  /// Whether a handler runs now (handlers never run nested, and sends inside them never block).
  bool in_handler() const noexcept { return handler_depth_ > 0; }

  /// Room for a record of `bytes` payload bytes to `dest`, with its header written; the caller
  /// writes the payload. Ships the buffer first if the record does not fit.
  std::byte* reserve(int dest, std::uint32_t key, std::size_t bytes) {
    outgoing& out = out_[static_cast<std::size_t>(dest)];
    const std::size_t need = sizeof(record_header) + padded(bytes);
    // A loop: shipping runs handlers, whose own sends may fill the fresh buffer again.
    while (out.data == nullptr || out.used + need > buffer_bytes_) ship(dest);
    std::byte* at = out.data + out.used;
    const record_header header{key, static_cast<std::uint32_t>(bytes)};
    std::memcpy(at, &header, sizeof header);
    out.used += need;
    return at + sizeof(record_header);
  }

  /// Receives and runs handlers, completes sends, advances termination waves. With
  /// `flush_when_idle`, partial buffers are sent when nothing arrived (the PE is idle).
  virtual void progress(bool flush_when_idle) = 0;
  /// Sends every partial buffer now.
  virtual void flush() = 0;
  /// Ships `dest`'s buffer (when it holds anything) and makes a fresh one current.
  virtual void ship(int dest) = 0;

  virtual int attach(mailbox_set& set) = 0;
  virtual void detach(int id) noexcept = 0;

  /// Ends the job with `message` on standard error: what a PGAS runtime does when one PE cannot
  /// go on, so that no other PE waits forever.
  [[noreturn]] virtual void abort_job(const std::string& message) const noexcept = 0;

 protected:
  friend class mailbox_set;
  int pe_ = 0;
  int npes_ = 1;
  std::size_t buffer_bytes_ = 0;
  int handler_depth_ = 0;
  std::vector<outgoing> out_;
};

}  // namespace troupe::pgas::detail
