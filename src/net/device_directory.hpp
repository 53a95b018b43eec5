#pragma once

#include <memory>

#include "device/remote_device_source.hpp"
#include "net/remote_device.hpp"

namespace troupe::net::detail {

/// The net layer's remote_device_source: asks every other node's service actor for its devices
/// and its device server, and offers them to the device layer as remote_devices.
class device_directory final : public troupe::detail::remote_device_source {
 public:
  explicit device_directory(actor_system& system);

  node_id this_node() const noexcept override;
  std::vector<std::unique_ptr<troupe::detail::backend_device>> discover() override;

 private:
  actor_system& system_;
  std::shared_ptr<remote_ids> ids_;
};

}  // namespace troupe::net::detail
