#include "net/actor_proxy.hpp"

#include "net/network.hpp"

namespace troupe::net::detail {

actor_proxy::actor_proxy(actor_system& system, std::shared_ptr<network> owner, node_id node,
                         actor_id id)
    : abstract_actor(system, "proxy"), owner_(std::move(owner)), node_(node), remote_id_(id) {
  set_remote();
}

std::string actor_proxy::description() const {
  return "actor #" + std::to_string(remote_id_) + " on node " + std::to_string(node_);
}

void actor_proxy::enqueue(mailbox_element_ptr element) {
  owner_->send(*this, std::move(element));
}

void actor_proxy::on_unreachable() {
  owner_->forget(*this);
  finish(error{errc::unreachable, description() + ": no handle on node " +
                                      std::to_string(owner_->self()) + " refers to it any more"});
}

void actor_proxy::on_watched() {
  if (!watched_.exchange(true, std::memory_order_acq_rel)) owner_->watch(*this);
}

}  // namespace troupe::net::detail
