#pragma once

#include <string>

#include "troupe/core/message.hpp"

// What nodes ask each other's service actor (the receiver of id 0 on every node).

namespace troupe::net::detail {

/// Spawn the actor type registered as `name` with `args`; the response is its handle.
struct spawn_request {
  std::string name;
  message args;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, args);
  }
};

/// The actor registered as `name`; the response is its handle.
struct lookup_request {
  std::string name;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(name);
  }
};

}  // namespace troupe::net::detail
