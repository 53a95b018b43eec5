#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace troupe::pgas {
class world;
}

namespace troupe::pgas::detail {

class mailbox_set;

/// An aggregation buffer holds blocks: this header, then `count` records for one mailbox, all
/// of one kind (one size, or one lambda type), each padded to 8 bytes. Consecutive messages to
/// one mailbox share a header, so a small message costs its own bytes only.
struct block_header {
  std::uint32_t key;           ///< the selector's id times 256, plus the mailbox
  std::uint32_t record_bytes;  ///< each record's size, or variable_size
  std::uint32_t count;         ///< records in the block
  std::uint32_t unused = 0;
  std::uint64_t code;  ///< a lambda's code address (module << 32 | offset); 0 otherwise
};
/// record_bytes of a block whose records each start with their size (8 bytes).
inline constexpr std::uint32_t variable_size = 0xffffffffu;
inline constexpr std::size_t record_alignment = 8;
inline constexpr std::size_t max_mailboxes = 256;

constexpr std::size_t padded(std::size_t bytes) noexcept {
  return (bytes + record_alignment - 1) & ~(record_alignment - 1);
}

/// The buffer of messages on their way to one PE, and its open block: the one that records of
/// the same mailbox and kind join. The open block's count is written into its header when the
/// block closes (seal), not per message.
struct outgoing {
  static constexpr std::size_t no_block = ~std::size_t{0};
  std::byte* data = nullptr;
  std::size_t used = 0;
  std::size_t open = no_block;  ///< where the open block's header starts
  std::uint32_t key = 0;
  std::uint32_t record_bytes = 0;
  std::uint64_t code = 0;
  std::uint32_t count = 0;

  /// Writes the open block's count into its header; no block is open afterwards.
  void seal() noexcept {
    if (open == no_block) return;
    std::memcpy(data + open + offsetof(block_header, count), &count, sizeof count);
    open = no_block;
  }
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
  std::size_t max_payload() const noexcept {
    return buffer_bytes_ - sizeof(block_header) - record_alignment;
  }
  /// Whether a handler runs now (handlers never run nested, and sends inside them never block).
  bool in_handler() const noexcept { return handler_depth_ > 0; }

  /// Room for a record of `bytes` payload bytes to `dest`, for mailbox `key`; the caller writes
  /// the payload. `code` is a lambda's code address (0 for others); `variable` says the record
  /// carries its size. Ships the buffer first if the record does not fit.
  std::byte* reserve(int dest, std::uint32_t key, std::uint64_t code, std::size_t bytes,
                     bool variable) {
    outgoing& out = out_[static_cast<std::size_t>(dest)];
    const auto each = variable ? variable_size : static_cast<std::uint32_t>(bytes);
    const std::size_t record = padded(bytes) + (variable ? record_alignment : 0);
    // A loop: shipping runs handlers, whose own sends may fill the fresh buffer again.
    for (;;) {
      if (out.data != nullptr) {
        if (out.open != outgoing::no_block && out.key == key && out.record_bytes == each &&
            out.code == code && out.used + record <= buffer_bytes_) {
          ++out.count;
          return append(out, record, bytes, variable);
        }
        if (out.used + sizeof(block_header) + record <= buffer_bytes_) {
          out.seal();
          const block_header header{key, each, 1, 0, code};
          std::memcpy(out.data + out.used, &header, sizeof header);
          out.open = out.used;
          out.key = key;
          out.record_bytes = each;
          out.code = code;
          out.count = 1;
          out.used += sizeof header;
          return append(out, record, bytes, variable);
        }
      }
      ship(dest);
    }
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

  /// Keeps the error of a selector destroyed before anything reported it; the world's next
  /// collective throws it.
  virtual void keep_unreported(std::exception_ptr failure) = 0;

  /// Ends the job with `message` on standard error: what a PGAS runtime does when one PE cannot
  /// go on, so that no other PE waits forever.
  [[noreturn]] virtual void abort_job(const std::string& message) const noexcept = 0;

 protected:
  static std::byte* append(outgoing& out, std::size_t record, std::size_t bytes, bool variable) {
    std::byte* at = out.data + out.used;
    out.used += record;
    if (!variable) return at;
    const std::uint64_t size = bytes;
    std::memcpy(at, &size, sizeof size);
    return at + sizeof size;
  }

  friend class mailbox_set;
  int pe_ = 0;
  int npes_ = 1;
  std::size_t buffer_bytes_ = 0;
  int handler_depth_ = 0;
  std::vector<outgoing> out_;
};

}  // namespace troupe::pgas::detail
