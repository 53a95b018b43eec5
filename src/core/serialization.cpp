#include "troupe/core/serialization/types.hpp"

namespace troupe {

namespace {

[[noreturn]] void no_handle_codec(const char* what) {
  throw error(errc::invalid_argument,
              std::string{what} +
                  ": an actor handle needs the net layer, which sends messages between nodes; "
                  "this archive has no handle codec");
}

}  // namespace

void save(output_archive& ar, const actor& handle) {
  const bool present = static_cast<bool>(handle);
  ar(present);
  if (!present) return;
  if (ar.handles() == nullptr) no_handle_codec("output_archive");
  const wire_handle wire = ar.handles()->encode(handle);
  ar(wire.node, wire.id);
}

void load(input_archive& ar, actor& handle) {
  bool present = false;
  ar(present);
  if (!present) {
    handle = actor{};
    return;
  }
  if (ar.handles() == nullptr) no_handle_codec("input_archive");
  wire_handle wire;
  ar(wire.node, wire.id);
  handle = ar.handles()->decode(wire);
}

void save(output_archive& ar, const actor_addr& handle) {
  save(ar, handle.lock());
}

void load(input_archive& ar, actor_addr& handle) {
  actor strong;
  load(ar, strong);
  handle = strong.address();
}

}  // namespace troupe
