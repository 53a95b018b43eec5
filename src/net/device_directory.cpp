#include "net/device_directory.hpp"

#include <utility>
#include <vector>

#include "net/device_messages.hpp"
#include "net/network.hpp"
#include "troupe/core/request.hpp"
#include "troupe/net/cluster.hpp"

namespace troupe::net::detail {

device_directory::device_directory(actor_system& system)
    : system_(system), ids_(std::make_shared<remote_ids>()) {}

node_id device_directory::this_node() const noexcept {
  return system_.nodes().this_node();
}

std::vector<std::unique_ptr<troupe::detail::backend_device>> device_directory::discover() {
  auto& net = network_of(system_);
  const node_id self = net.self();
  ids_->self = self;
  // Asked all at once, then awaited in order: one round trip for the whole job.
  std::vector<std::pair<node_id, future<message>>> asked;
  for (node_id node = 0; node < net.size(); ++node)
    if (node != self)
      asked.emplace_back(node, request<message>(net.service_of(node), device_list_request{}));
  std::vector<std::unique_ptr<troupe::detail::backend_device>> found;
  for (auto& [node, answer] : asked) {
    message list;
    try {
      list = answer.get();
    } catch (const error& e) {
      throw error{e.code(), "devices: node " + std::to_string(node) +
                                " could not list its devices: " + e.what()};
    }
    if (!list.match<actor, std::vector<device_description>>())
      throw error{errc::invalid_argument, "devices: node " + std::to_string(node) + " answered " +
                                              list.type_names() + " to a device list request"};
    const auto& server = list.get_as<actor>(0);
    const auto& devices = list.get_as<std::vector<device_description>>(1);
    for (std::uint32_t index = 0; index < devices.size(); ++index)
      found.push_back(
          std::make_unique<remote_device>(devices[index].info_on(node), server, index, ids_));
  }
  return found;
}

}  // namespace troupe::net::detail
