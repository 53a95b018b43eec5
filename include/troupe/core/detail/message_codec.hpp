#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "troupe/core/message.hpp"
#include "troupe/core/serialization/types.hpp"

namespace troupe::detail {

/// A message element kept as one block of bytes: on the wire its bytes are a segment of their
/// own (sent from where they lie) once the block is large, instead of going through cereal.
template <class T>
struct is_contiguous_block : std::false_type {};
template <class T, class A>
requires((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
         std::is_same_v<T, std::byte>) struct is_contiguous_block<std::vector<T, A>>
    : std::true_type {
};
template <>
struct is_contiguous_block<std::string> : std::true_type {};

/// Stands in for an archive when asking whether a class serializes itself. Not a cereal
/// archive: lookup through the archive's type would find cereal's functions for any container.
struct archive_probe {
  template <class... Ts>
  void operator()(Ts&&...) {}
};

/// A class that says itself how it crosses: a `serialize` member or function (found next to the
/// class), or `save` and `load`, written for any archive as cereal asks. cereal itself is not
/// asked: it would accept any container, and stop the compilation at a raw pointer.
template <class T>
concept serializes_itself = std::is_class_v<T> &&(
    requires(T& value, archive_probe& ar) { value.serialize(ar); } ||
    requires(T & value, archive_probe& ar) { serialize(ar, value); } ||
    (
        requires(const T& value, archive_probe& ar) { value.save(ar); } &&
        requires(T & value, archive_probe& ar) { value.load(ar); }) ||
    (
        requires(const T& value, archive_probe& ar) { save(ar, value); } &&
        requires(T & value, archive_probe& ar) { load(ar, value); }));

/// True if a message element of type T can cross nodes: the types of serialization/types.hpp,
/// looked into element by element, and classes that serialize themselves. Anything else (a raw
/// pointer, a std::list, a lambda) stays in its process; sending it to another node fails.
template <class T>
struct crosses_nodes
    : std::bool_constant<std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                         (serializes_itself<T> && std::is_default_constructible_v<T>)> {};
template <>
struct crosses_nodes<std::string> : std::true_type {};
template <>
struct crosses_nodes<actor> : std::true_type {};
template <>
struct crosses_nodes<actor_addr> : std::true_type {};
template <>
struct crosses_nodes<message> : std::true_type {};
template <class T, class A>
struct crosses_nodes<std::vector<T, A>> : crosses_nodes<T> {};
template <class T, std::size_t N>
struct crosses_nodes<std::array<T, N>> : crosses_nodes<T> {};
template <class T>
struct crosses_nodes<std::optional<T>> : crosses_nodes<T> {};
template <class K, class V, class C, class A>
struct crosses_nodes<std::map<K, V, C, A>>
    : std::bool_constant<crosses_nodes<K>::value && crosses_nodes<V>::value> {};
template <class K, class V, class H, class E, class A>
struct crosses_nodes<std::unordered_map<K, V, H, E, A>>
    : std::bool_constant<crosses_nodes<K>::value && crosses_nodes<V>::value> {};
template <class A, class B>
struct crosses_nodes<std::pair<A, B>>
    : std::bool_constant<crosses_nodes<A>::value && crosses_nodes<B>::value> {};
template <class... Ts>
struct crosses_nodes<std::tuple<Ts...>> : std::bool_constant<(crosses_nodes<Ts>::value && ...)> {};
template <class... Ts>
struct crosses_nodes<std::variant<Ts...>> : std::bool_constant<(crosses_nodes<Ts>::value && ...)> {
};

template <class T>
inline constexpr bool can_cross_nodes = is_contiguous_block<T>::value || crosses_nodes<T>::value;

/// Blocks of at least this many bytes become segments where the archive's user takes them.
inline constexpr std::size_t no_segments = ~std::size_t{0};

/// Asks for huge pages for a new block of `bytes` at `data`, before anything touches it: a large
/// block arrives in fresh memory, and faulting it in page by page took three times as long
/// (bench-net net_bandwidth, 64 MiB and up). Does nothing for small blocks.
void advise_huge_pages(void* data, std::size_t bytes) noexcept;

template <class T>
void save_element(output_archive& ar, const T& value, std::size_t segment_bytes) {
  if constexpr (is_contiguous_block<T>::value) {
    const std::uint64_t count = value.size();
    ar(count);
    const std::size_t bytes = count * sizeof(typename T::value_type);
    if (bytes >= segment_bytes)
      ar.add_segment(value.data(), bytes);
    else
      ar.write(value.data(), bytes);
  } else {
    ar(value);
  }
}

template <class T>
void load_element(input_archive& ar, T& value, std::size_t segment_bytes) {
  if constexpr (is_contiguous_block<T>::value) {
    std::uint64_t count = 0;
    ar(count);
    constexpr std::size_t element = sizeof(typename T::value_type);
    if (count > (~std::uint64_t{0}) / element)
      throw error(errc::invalid_argument,
                  "input_archive: a block of " + std::to_string(count) + " elements");
    const std::size_t bytes = count * element;
    if (bytes >= segment_bytes) {
      // Arrives later, straight into the block: its memory is prepared before it is touched.
      value.reserve(count);
      advise_huge_pages(value.data(), bytes);
      value.resize(count);
      ar.add_segment(value.data(), bytes);
      return;
    }
    if (bytes > ar.remaining())
      throw error(errc::invalid_argument, "input_archive: a block of " + std::to_string(bytes) +
                                              " bytes where only " +
                                              std::to_string(ar.remaining()) + " are left");
    value.resize(count);
    ar.read(value.data(), bytes);
  } else {
    ar(value);
  }
}

/// How the messages of one type list cross nodes.
struct message_codec {
  /// Names the type list on the wire (a hash of its element types' names).
  std::uint64_t key;
  /// "(int, std::string)".
  std::string names;
  /// The first element type that cannot cross nodes, or null if all can.
  const std::type_info* unencodable;
  /// Writes the elements; blocks of `segment_bytes` or more become segments.
  void (*save)(const message& msg, output_archive& ar, std::size_t segment_bytes);
  /// Reads the elements into fresh data.
  message_data* (*load)(input_archive& ar, std::size_t segment_bytes);
};

/// The codec of `key`, or null: those of every type list the program can send are registered
/// before main runs (one program runs on every node, so all nodes know the same lists).
const message_codec* find_codec(std::uint64_t key) noexcept;

/// Registers a codec at start-up; a second list with the same key ends the program.
bool register_codec(const message_codec& codec) noexcept;

/// The key of a type list: a hash of its element types' mangled names and of where `anchor` (its
/// codec) lies in its module. Names alone collide for types in anonymous namespaces, which have
/// the same name in every file; the place differs, and is the same in every process of the
/// program.
std::uint64_t codec_key(const type_list_info& types, const void* anchor) noexcept;

template <class... Ts>
const message_codec& make_codec() {
  static message_codec codec{0, type_names(type_list_of<Ts...>), nullptr, nullptr, nullptr};
  static const bool made = [] {
    message_codec& result = codec;
    result.key = codec_key(type_list_of<Ts...>, &codec);
    ((result.unencodable == nullptr && !can_cross_nodes<Ts> ? result.unencodable = &typeid(Ts)
                                                            : nullptr),
     ...);
    if constexpr ((can_cross_nodes<Ts> && ...)) {
      result.save = [](const message& msg, output_archive& ar,
                       [[maybe_unused]] std::size_t segment_bytes) {
        [[maybe_unused]] std::size_t index = 0;
        (save_element(ar, *static_cast<const Ts*>(msg.at(index++)), segment_bytes), ...);
      };
      result.load = [](input_archive& ar,
                       [[maybe_unused]] std::size_t segment_bytes) -> message_data* {
        auto* data = new typed_message_data<Ts...>();
        try {
          [[maybe_unused]] std::size_t index = 0;
          (load_element(ar, *static_cast<Ts*>(data->at(index++)), segment_bytes), ...);
        } catch (...) {
          data->release();
          throw;
        }
        return data;
      };
    }
    return true;
  }();
  (void)made;
  return codec;
}

/// Registered before main: every type list the program instantiates a codec for.
template <class... Ts>
inline const bool codec_registered = register_codec(make_codec<Ts...>());

template <class... Ts>
const message_codec* codec_of() noexcept {
  (void)codec_registered<Ts...>;
  return &make_codec<Ts...>();
}

}  // namespace troupe::detail

namespace troupe {

/// A message inside a message crosses as its type list's key and its elements.
inline void save(output_archive& ar, const message& msg) {
  const detail::message_codec& codec = *msg.types()->codec();
  if (codec.unencodable != nullptr)
    throw error(errc::invalid_argument, "a message of " + codec.names + " cannot cross nodes: " +
                                            detail::type_name(*codec.unencodable) +
                                            " has no cereal serialize function");
  ar(codec.key);
  codec.save(msg, ar, detail::no_segments);
}

inline void load(input_archive& ar, message& msg) {
  std::uint64_t key = 0;
  ar(key);
  const detail::message_codec* codec = detail::find_codec(key);
  if (codec == nullptr || codec->load == nullptr)
    throw error(errc::invalid_argument,
                "input_archive: a message of a type list this program does not know");
  msg = message{detail::intrusive_ptr<detail::message_data>{codec->load(ar, detail::no_segments),
                                                            detail::adopt_ref}};
}

}  // namespace troupe
