#pragma once

#include "troupe/async/error.hpp"
#include "troupe/core/actor_addr.hpp"

// The messages the system sends when an actor ends: to its monitors and to its links.

namespace troupe {

/// Sent to a monitor when the monitored actor ends.
struct down_msg {
  actor_addr source;
  error reason;
};

/// Sent to linked actors when an actor ends. Unless trapped with an exit handler, an exit
/// message with a reason other than none ends the receiver with the same reason.
struct exit_msg {
  actor_addr source;
  error reason;
};

}  // namespace troupe
