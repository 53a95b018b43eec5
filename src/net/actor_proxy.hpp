#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "troupe/core/abstract_actor.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe::net::detail {

class network;

/// Stands for an actor on another node: what it is sent goes there, and it ends when that actor
/// does (once something monitors, links or hooks it) or when the job ends.
class actor_proxy final : public abstract_actor {
 public:
  actor_proxy(actor_system& system, std::shared_ptr<network> owner, node_id node, actor_id id);

  node_id node() const noexcept { return node_; }
  actor_id remote_id() const noexcept { return remote_id_; }
  const network& owner() const noexcept { return *owner_; }

  std::string description() const override;
  void enqueue(mailbox_element_ptr element) override;

  /// The actor it stands for has ended with `reason`.
  void remote_ended(const error& reason) { finish(reason); }

 protected:
  void on_unreachable() override;
  void on_watched() override;

 private:
  std::shared_ptr<network> owner_;
  node_id node_;
  actor_id remote_id_;
  std::atomic<bool> watched_{false};
};

}  // namespace troupe::net::detail
