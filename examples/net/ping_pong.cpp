// Ping-pong across nodes: an actor on node 0 and one on node 1 hit a ball back and forth. Run it
// as an MPI job; every node runs this same program and node 0 drives:
//   mpirun -n 2 build/release/examples/net_ping_pong
#include <iostream>

#include "troupe/net.hpp"

using troupe::behavior;
using troupe::event_based_actor;

int main() {
  troupe::config cfg;
  // Types that any node may spawn by name: registered the same way on every node.
  cfg.add_actor_type("pong", [](event_based_actor*) -> behavior {
    return {[](int ball) { return ball + 1; }};  // the answer goes back to the sender
  });
  troupe::actor_system sys{cfg};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return 0;  // the other nodes serve until node 0 is done

  auto pong = sys.spawn_on(nodes.size() - 1, "pong").get();  // a handle to an actor there
  int ball = 0;
  for (int hit = 0; hit < 1000; ++hit) ball = troupe::request<int>(pong, ball).get();
  std::cout << "ping_pong: the ball came back " << ball << " times from node " << nodes.size() - 1
            << " of " << nodes.size() << "\n";
  return ball == 1000 ? 0 : 1;
}
