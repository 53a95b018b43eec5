#pragma once

#include <functional>

#include "troupe/core/message.hpp"

namespace troupe {

class event_based_actor;

/// What an actor does with an asynchronous message that none of its handlers matches. It gets
/// the actor and the message; what it returns is routed as any handler's result is: a result
/// that is neither empty nor an error goes back to the sender as an ordinary message. Set one
/// per actor with event_based_actor::set_default_handler, or for all actors of a system with
/// config::default_handler. A request that no handler matches never reaches it: the requester
/// gets errc::unexpected_message, naming the actor and the message's types.
using default_handler = std::function<message(event_based_actor* self, message& content)>;

/// The default handlers troupe names (those of CAF, but for skip).
namespace default_handlers {

/// Drops the message without a trace; the actor goes on.
message drop(event_based_actor* self, message& content);

/// Writes one line to stderr that names the actor, the message's types and its sender, then
/// drops the message; the actor goes on. The default of config::default_handler.
message print_and_drop(event_based_actor* self, message& content);

/// Sends the message back to its sender as it came; the actor goes on. A message sent from no
/// actor has nowhere to go back to, and is dropped.
message reflect(event_based_actor* self, message& content);

/// Like reflect, then ends the actor with errc::unexpected_message, naming the actor and the
/// message's types: its monitors and links learn why.
message reflect_and_quit(event_based_actor* self, message& content);

}  // namespace default_handlers

}  // namespace troupe
