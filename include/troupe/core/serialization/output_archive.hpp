#pragma once

#include <cereal/cereal.hpp>

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "troupe/core/serialization/wire_handle.hpp"

namespace troupe {

class abstract_actor;

/// Writes values as bytes for another node of the same program (a cereal archive). Contiguous
/// data of arithmetic type is copied as it lies, never element by element. Where the caller
/// allows it, large top-level blocks are not copied at all but recorded as segments, which the
/// transport sends from where they lie.
class output_archive
    : public cereal::OutputArchive<output_archive, cereal::AllowEmptyClassElision> {
 public:
  // -- constructors ---------------------------------------------------------

  /// Appends to `bytes`; actor handles are written through `handles` (none: writing one fails).
  explicit output_archive(std::vector<std::byte>& bytes, handle_encoder* handles = nullptr)
      : OutputArchive(this), bytes_(bytes), handles_(handles) {}

  // -- properties -----------------------------------------------------------

  handle_encoder* handles() const noexcept { return handles_; }

  /// Blocks recorded by add_segment, in order.
  const std::vector<std::span<const std::byte>>& segments() const noexcept { return segments_; }

  // -- operations -----------------------------------------------------------

  void write(const void* data, std::size_t size) {
    auto* from = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), from, from + size);
  }

  /// Records a block that stays where it lies until the transport has sent it.
  void add_segment(const void* data, std::size_t size) {
    segments_.emplace_back(static_cast<const std::byte*>(data), size);
  }

 private:
  std::vector<std::byte>& bytes_;
  handle_encoder* handles_;
  std::vector<std::span<const std::byte>> segments_;
};

template <class T>
requires std::is_arithmetic_v<T>
void CEREAL_SAVE_FUNCTION_NAME(output_archive& ar, const T& value) {
  ar.write(&value, sizeof value);
}

template <class T>
void CEREAL_SAVE_FUNCTION_NAME(output_archive& ar, const cereal::BinaryData<T>& block) {
  ar.write(block.data, static_cast<std::size_t>(block.size));
}

template <class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(output_archive& ar, cereal::NameValuePair<T>& pair) {
  ar(pair.value);
}

template <class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(output_archive& ar, cereal::SizeTag<T>& tag) {
  ar(tag.size);
}

}  // namespace troupe
