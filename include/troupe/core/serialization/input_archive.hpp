#pragma once

#include <cereal/cereal.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/core/serialization/wire_handle.hpp"

namespace troupe {

/// Reads what an output_archive wrote (a cereal archive). Reading past the end, or a value that
/// cannot be what was written, throws troupe::error (invalid_argument) instead of reading on.
/// Segments the writer left out are not read here: their sizes are known, and add_segment
/// records where they go, for the transport to receive them in place.
class input_archive : public cereal::InputArchive<input_archive, cereal::AllowEmptyClassElision> {
 public:
  // -- constructors ---------------------------------------------------------

  /// Reads `bytes`; actor handles are read through `handles` (none: reading one fails).
  explicit input_archive(std::span<const std::byte> bytes, handle_decoder* handles = nullptr)
      : InputArchive(this), bytes_(bytes), handles_(handles) {}

  // -- properties -----------------------------------------------------------

  handle_decoder* handles() const noexcept { return handles_; }

  /// Bytes not read yet.
  std::size_t remaining() const noexcept { return bytes_.size() - position_; }

  /// Where the segments go, in the order they were written.
  const std::vector<std::span<std::byte>>& segments() const noexcept { return segments_; }

  // -- operations -----------------------------------------------------------

  void read(void* data, std::size_t size) {
    if (size > remaining())
      throw error(errc::invalid_argument, "input_archive: " + std::to_string(size) +
                                              " bytes wanted where " + std::to_string(remaining()) +
                                              " are left");
    if (size == 0) return;  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(data, bytes_.data() + position_, size);
    position_ += size;
  }

  /// Records where a segment of `size` bytes is to be received.
  void add_segment(void* data, std::size_t size) {
    segments_.emplace_back(static_cast<std::byte*>(data), size);
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t position_ = 0;
  handle_decoder* handles_;
  std::vector<std::span<std::byte>> segments_;
};

template <class T>
requires std::is_arithmetic_v<T>
void CEREAL_LOAD_FUNCTION_NAME(input_archive& ar, T& value) {
  ar.read(&value, sizeof value);
}

template <class T>
void CEREAL_LOAD_FUNCTION_NAME(input_archive& ar, cereal::BinaryData<T>& block) {
  ar.read(block.data, static_cast<std::size_t>(block.size));
}

template <class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(input_archive& ar, cereal::NameValuePair<T>& pair) {
  ar(pair.value);
}

// A container's size is checked against the bytes left (each element takes at least one), so
// that a corrupt size fails at once instead of allocating terabytes first.
template <class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(input_archive& ar, cereal::SizeTag<T>& tag) {
  ar(tag.size);
  if (static_cast<std::uint64_t>(tag.size) > ar.remaining())
    throw error(errc::invalid_argument, "input_archive: a container of " +
                                            std::to_string(tag.size) + " elements where only " +
                                            std::to_string(ar.remaining()) + " bytes are left");
}

}  // namespace troupe
