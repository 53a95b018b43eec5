// Remote spawn and lookup: node 0 spawns a worker on every node by name, with an argument, and
// finds an actor that each node registered under a name of its own choosing.
//   mpirun -n 2 build/release/examples/net_remote_spawn
#include <iostream>
#include <string>

#include "troupe/net.hpp"

using troupe::behavior;
using troupe::event_based_actor;

int main() {
  troupe::config cfg;
  cfg.add_actor_type("multiplier", [](event_based_actor*, int factor) -> behavior {
    return {[factor](int x) { return x * factor; }};
  });
  troupe::actor_system sys{cfg};
  auto& nodes = sys.nodes();
  const int me = static_cast<int>(nodes.this_node());
  // Every node names one actor of its own; lookup_on finds it from anywhere.
  sys.registry().put("greeter", sys.spawn([me](const std::string& name) {
    return "hello " + name + " from node " + std::to_string(me);
  }));
  if (me != 0) return 0;

  bool right = true;
  for (troupe::node_id node = 0; node < nodes.size(); ++node) {
    auto worker = sys.spawn_on(node, "multiplier", static_cast<int>(node) + 2).get();
    const int product = troupe::request<int>(worker, 10).get();
    auto greeter = sys.lookup_on(node, "greeter").get();
    const auto greeting = troupe::request<std::string>(greeter, std::string{"node 0"}).get();
    std::cout << "node " << node << ": 10 * " << node + 2 << " = " << product << "; " << greeting
              << "\n";
    right = right && product == 10 * (static_cast<int>(node) + 2) &&
            greeting == "hello node 0 from node " + std::to_string(node);
  }
  // Mistakes come back as errors that say what is wrong.
  try {
    sys.spawn_on(0, "multiplier", std::string{"two"}).get();
    right = false;
  } catch (const troupe::error& e) {
    std::cout << "as expected: " << e.what() << "\n";
  }
  return right ? 0 : 1;
}
