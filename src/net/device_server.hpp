#pragma once

#include "troupe/core/actor.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/message.hpp"

namespace troupe::net::detail {

/// Spawns the actor through which other nodes use this node's devices (see
/// device_messages.hpp). It issues their commands on the local devices in the order they
/// arrive, one queue of its own per client queue, and answers each command when it has ended.
actor spawn_device_server(actor_system& system);

/// The answer to a device_list_request: `server` (spawned on first use) and this node's
/// devices, as a std::vector<device_description>.
message describe_devices(actor_system& system, actor& server);

}  // namespace troupe::net::detail
