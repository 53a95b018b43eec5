// Where the net layer meets the actor system: the extension that owns a node's network, the
// members of actor_system that the net layer defines, and the hook that joins the job.

#include <memory>

#include "net/device_directory.hpp"
#include "net/network.hpp"
#include "troupe/net/cluster.hpp"

namespace troupe {

namespace net::detail {

namespace {

class net_extension final : public actor_system::extension {
 public:
  explicit net_extension(actor_system& system) : network_(std::make_shared<network>(system)) {}

  static network& of(actor_system& system) {
    static const char key = 0;
    if (auto* found = system.find_extension(&key))
      return *static_cast<net_extension*>(found)->network_;
    // Joining is collective: a node whose system is ending must not start it alone.
    if (system.shutting_down())
      throw error(errc::system_gone,
                  "net: the actor system is shutting down; its nodes can no longer be reached");
    auto& ext = static_cast<net_extension&>(
        system.extension_for(&key, [](actor_system& sys) -> std::unique_ptr<extension> {
          auto fresh = std::make_unique<net_extension>(sys);
          fresh->network_->join();
          return fresh;
        }));
    return *ext.network_;
  }

  void shutdown_started() noexcept override { network_->shutdown_started(); }
  void stop() noexcept override { network_->stop(); }

 private:
  std::shared_ptr<network> network_;
};

}  // namespace

network& network_of(actor_system& system) {
  return net_extension::of(system);
}

}  // namespace net::detail

cluster& actor_system::nodes() {
  return net::detail::net_extension::of(*this).nodes();
}

future<actor> actor_system::spawn_on_with(node_id node, const std::string& name, message args) {
  return net::detail::net_extension::of(*this).spawn_on(node, name, std::move(args));
}

future<actor> actor_system::lookup_on(node_id node, const std::string& name) {
  return net::detail::net_extension::of(*this).lookup_on(node, name);
}

}  // namespace troupe

extern "C" void troupe_net_join(troupe::actor_system* system) {
  using namespace troupe::net::detail;
  if (net_extension::of(*system).size() < 2) return;
  // The devices of the other nodes join this node's list when it is first asked for.
  system->extension_for(
      troupe::detail::remote_device_source::key(),
      [](troupe::actor_system& sys) -> std::unique_ptr<troupe::actor_system::extension> {
        return std::make_unique<device_directory>(sys);
      });
}
