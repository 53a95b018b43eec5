// hello_actor: spawn an actor from a plain lambda and ask it something from main.
// The lambda's parameter types say which messages the actor accepts; request<int> sends one and
// returns a troupe::future<int> whose get() waits for the answer.
#include <iostream>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  auto adder = system.spawn([](int a, int b) { return a + b; });

  int sum = troupe::request<int>(adder, 40, 2).get();
  std::cout << "adder answered 40 + 2 = " << sum << "\n";
  return sum == 42 ? 0 : 1;
}
