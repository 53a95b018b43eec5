#pragma once

// Where the devices of other processes come from: the net layer registers a source with the
// actor system, and the device layer lists what it finds beside its own devices. The device
// layer so never depends on the net layer (DESIGN.md, "Remote devices").

#include <memory>
#include <vector>

#include "device/backend.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe::detail {

/// The devices of the job's other nodes, each as one more backend_device.
class remote_device_source : public actor_system::extension {
 public:
  /// The key the source is registered under (actor_system::extension_for).
  static const void* key() noexcept {
    static const char k = 0;
    return &k;
  }

  /// This process's node: the node of its own devices.
  virtual node_id this_node() const noexcept = 0;

  /// Asks every other node for its devices; blocks the calling thread until each has answered.
  /// Called once per actor system, by its first devices(). Throws troupe::error naming a node
  /// that could not answer.
  virtual std::vector<std::unique_ptr<backend_device>> discover() = 0;
};

}  // namespace troupe::detail
