// stateful_actor: an actor class with members. Derive from troupe::event_based_actor, keep
// state in members, and return the handlers from make_behavior(). Only this actor touches its
// members, one message at a time, so they need no locks.
#include <iostream>

#include "troupe/troupe.hpp"

// Messages are plain types; a handler is chosen by the types of the message's elements.
struct add {
  int amount;
};
struct get_total {};

class counter final : public troupe::event_based_actor {
 public:
  explicit counter(troupe::actor_system& system) : event_based_actor(system, "counter") {}

  troupe::behavior make_behavior() override {
    return {
        [this](add request) { total_ += request.amount; },
        [this](get_total) { return total_; },
    };
  }

 private:
  int total_ = 0;
};

int main() {
  troupe::actor_system system;
  auto tally = system.spawn<counter>();

  // Plain sends are processed in the order they were sent; so is the request after them.
  for (int i = 1; i <= 10; ++i) troupe::send(tally, add{i});
  int total = troupe::request<int>(tally, get_total{}).get();

  std::cout << "counter total after adding 1..10: " << total << " (expected 55)\n";
  return total == 55 ? 0 : 1;
}
