// registry: find actors by name instead of passing handles around. system.registry().put()
// names an actor, get() looks it up (an empty handle if the name is unknown), and the entry
// disappears by itself when its actor ends.
#include <iostream>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  auto& registry = system.registry();
  registry.put("multiplier", system.spawn([](int a, int b) { return a * b; }));

  // Elsewhere in the program: no handle at hand, only the name.
  auto found = registry.get("multiplier");
  int product = troupe::request<int>(found, 6, 7).get();
  std::cout << "looked up 'multiplier' and asked 6 * 7: " << product << "\n";
  std::cout << "looking up 'nobody' gives " << (registry.get("nobody") ? "an actor" : "nothing")
            << "\n";

  // End the actor and wait for its down_msg; by then its entry is gone.
  troupe::scoped_actor self{system};
  found->add_monitor(self.handle().address());
  troupe::send_exit(found, troupe::error{troupe::errc::kill, "the example is done with it"});
  self->receive([](const troupe::down_msg&) {});
  bool gone = !registry.get("multiplier");
  std::cout << "after the actor ended, 'multiplier' is " << (gone ? "no longer" : "still")
            << " registered\n";
  return product == 42 && gone ? 0 : 1;
}
