// become: an actor as a state machine. A turnstile is locked until a coin arrives; become()
// switches the handlers. become(keep_behavior, b) pushes a state that unbecome() pops again;
// become(b) replaces the current state for good.
#include <iostream>
#include <string>
#include <vector>

#include "troupe/troupe.hpp"

struct coin {};
struct push {};
struct jam {};

int main() {
  troupe::actor_system system;
  auto turnstile = system.spawn([](troupe::event_based_actor* self) {
    troupe::behavior out_of_order{[](coin) { return std::string{"refund"}; },
                                  [](push) { return std::string{"out of order"}; }};
    troupe::behavior unlocked{[](coin) { return std::string{"refund"}; },
                              [self](push) {
                                self->unbecome();  // back to locked
                                return std::string{"pass"};
                              }};
    return troupe::behavior{[self, unlocked](coin) {
                              self->become(troupe::keep_behavior, unlocked);
                              return std::string{"unlocked"};
                            },
                            [](push) { return std::string{"locked"}; },
                            [self, out_of_order](jam) { self->become(out_of_order); }};
  });

  // Each answer shows which state handled the input.
  std::vector<std::string> answers;
  auto ask = [&](auto input, const char* name) {
    answers.push_back(troupe::request<std::string>(turnstile, input).get());
    std::cout << name << " -> " << answers.back() << "\n";
  };
  ask(push{}, "push");
  ask(coin{}, "coin");
  ask(coin{}, "coin");
  ask(push{}, "push");
  ask(push{}, "push");
  troupe::request<void>(turnstile, jam{}).get();
  std::cout << "jam\n";
  ask(coin{}, "coin");
  ask(push{}, "push");

  const std::vector<std::string> expected{"locked", "unlocked", "refund",      "pass",
                                          "locked", "refund",   "out of order"};
  bool ok = answers == expected;
  std::cout << "the turnstile went through locked, unlocked and out of order as expected: "
            << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
