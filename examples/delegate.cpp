// delegate: a front end forwards each request to a worker, and the worker answers the original
// requester directly. The front end's handler returns self->delegate(worker, ...), which
// promises that someone else will respond; no reply travels back through the front end.
#include <iostream>
#include <string>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  auto make_worker = [&](std::string name) {
    return system.spawn([name](int x) {
      return name + " squared " + std::to_string(x) + " = " + std::to_string(x * x);
    });
  };
  auto even_worker = make_worker("even worker");
  auto odd_worker = make_worker("odd worker");

  auto front_end = system.spawn(
      [](troupe::event_based_actor* self, troupe::actor even, troupe::actor odd) {
        return troupe::behavior{[=](int x) { return self->delegate(x % 2 == 0 ? even : odd, x); }};
      },
      even_worker, odd_worker);

  auto even_answer = troupe::request<std::string>(front_end, 4).get();
  auto odd_answer = troupe::request<std::string>(front_end, 7).get();
  std::cout << even_answer << "\n" << odd_answer << "\n";
  return even_answer == "even worker squared 4 = 16" && odd_answer == "odd worker squared 7 = 49"
             ? 0
             : 1;
}
