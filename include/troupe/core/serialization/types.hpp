#pragma once

// The types a message can carry across nodes without help: arithmetic types and enums (cereal's
// own), the standard containers and wrappers below, troupe::error, actor handles and the
// system's down and exit messages. A type of your own needs one cereal `serialize` function.

#include <cereal/types/array.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <string>

#include "troupe/async/error.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/serialization/input_archive.hpp"
#include "troupe/core/serialization/output_archive.hpp"
#include "troupe/core/system_messages.hpp"

namespace troupe {

template <class Archive>
void save(Archive& ar, const error& value) {
  ar(static_cast<std::uint8_t>(value.code()), std::string{value.what()});
}

template <class Archive>
void load(Archive& ar, error& value) {
  std::uint8_t code = 0;
  std::string text;
  ar(code, text);
  if (code > static_cast<std::uint8_t>(errc::limit_reached))
    throw error(errc::invalid_argument,
                "input_archive: an error code of " + std::to_string(code) + ", which troupe lacks");
  value = error{static_cast<errc>(code), text};
}

/// A handle is written as the node that runs the actor and its id there (see wire_handle).
void save(output_archive& ar, const actor& handle);
void load(input_archive& ar, actor& handle);

/// A weak handle crosses as a handle to the same actor; one whose actor is gone crosses empty.
void save(output_archive& ar, const actor_addr& handle);
void load(input_archive& ar, actor_addr& handle);

template <class Archive>
void serialize(Archive& ar, down_msg& value) {
  ar(value.source, value.reason);
}

template <class Archive>
void serialize(Archive& ar, exit_msg& value) {
  ar(value.source, value.reason);
}

}  // namespace troupe

CEREAL_SETUP_ARCHIVE_TRAITS(troupe::input_archive, troupe::output_archive)
