#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "net/wire.hpp"
#include "troupe/async/error.hpp"
#include "troupe/core/serialization/input_archive.hpp"
#include "troupe/core/serialization/output_archive.hpp"

namespace troupe::net::detail {

/// The bytes of a remote write, read or fill, as a message element. They are sent from where
/// they lie, and arrive in a block of the landing_pool, or, for a read's answer, straight in the
/// reader's destination: no copy into or out of a message on either side.
class bulk_bytes {
 public:
  bulk_bytes() = default;

  /// Borrows `size` bytes at `data`, which must stay valid until the message has been sent.
  static bulk_bytes borrow(const void* data, std::size_t size);
  /// A copy of `size` bytes at `data`.
  static bulk_bytes copy_of(const void* data, std::size_t size);
  /// `size` bytes of a pooled block, to be filled; they arrive at the reader's `landing`.
  static bulk_bytes block(std::size_t size, std::uint64_t landing);

  /// Reserves `destination` for the answer that carries `landing` (returned): it arrives there.
  static std::uint64_t expect(std::span<std::byte> destination);
  /// Ends the reservation of `landing` (its answer has come, or will not).
  static void forget(std::uint64_t landing) noexcept;

  const std::byte* data() const noexcept { return data_; }
  std::byte* data() noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

  template <class Archive>
  void save(Archive& ar) const {
    ar(landing_, static_cast<std::uint64_t>(size_));
    if (size_ >= segment_bytes)
      ar.add_segment(data_, size_);
    else
      ar.write(data_, size_);
  }

  template <class Archive>
  void load(Archive& ar) {
    std::uint64_t size = 0;
    ar(landing_, size);
    land(size);
    if (size_ >= segment_bytes)
      ar.add_segment(data_, size_);
    else
      ar.read(data_, size_);
  }

 private:
  // Points data_ at where `size` arriving bytes go: the reserved destination, or a block.
  void land(std::uint64_t size);

  std::uint64_t landing_ = 0;  // 0: none
  std::shared_ptr<std::byte> owned_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace troupe::net::detail
