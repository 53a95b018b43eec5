#pragma once

#include <cstdint>

#include "troupe/core/actor_id.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe {

class actor;
class output_archive;
class input_archive;

/// An actor handle as it crosses nodes: the node that runs the actor and its id there.
struct wire_handle {
  node_id node = 0;
  actor_id id = 0;
};

/// Turns handles into wire handles as a message is written (the net layer keeps what it sends
/// reachable from other nodes).
class handle_encoder {
 public:
  virtual ~handle_encoder() = default;
  /// The wire form of a non-empty handle.
  virtual wire_handle encode(const actor& handle) = 0;
};

/// Turns wire handles back into handles as a message is read: a local actor, or a proxy of a
/// remote one.
class handle_decoder {
 public:
  virtual ~handle_decoder() = default;
  /// The handle of `wire`; an actor that has ended comes back as a handle that bounces.
  virtual actor decode(const wire_handle& wire) = 0;
};

}  // namespace troupe
