// Jobs that must end loudly instead of hanging (see CMakeLists.txt for what each must print):
//   different_program  nodes of one job run different binaries (built twice from this file)
//   node_dies          a node's process dies while node 0 waits for it

#include <csignal>
#include <iostream>

#include "troupe/net.hpp"

#ifndef TROUPE_OTHER_PROGRAM
#define TROUPE_OTHER_PROGRAM 0
#endif

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  troupe::config cfg;
  cfg.threads = 2;
  cfg.add_actor_type("doomed", [](troupe::event_based_actor*) -> troupe::behavior {
    return {[](int) -> int {
      std::raise(SIGKILL);
      return 0;
    }};
  });
  if (mode == "different_program") {
    // Build ids differ between the two binaries; the constructor refuses on every node.
    std::cout << "program " << TROUPE_OTHER_PROGRAM << "\n";
    troupe::actor_system sys{cfg};
    std::cerr << "the nodes joined although they run different programs\n";
    return 0;
  }
  if (mode == "node_dies") {
    troupe::actor_system sys{cfg};
    if (sys.nodes().this_node() == 0) {
      auto doomed = sys.spawn_on(1, "doomed").get();
      troupe::request<int>(doomed, 1).get();  // never answered: node 1 dies
      std::cerr << "node 0 got an answer from a dead node\n";
    }
    return 0;
  }
  std::cerr << "usage: net_failing_job different_program|node_dies\n";
  return 2;
}
