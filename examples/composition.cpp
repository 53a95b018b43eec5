// composition: `c * b * a` is an actor that runs a, then b, then c, like function composition.
// Each stage's result goes straight to the next stage, and the last one answers the requester;
// an error at any stage goes straight back to the requester.
#include <iostream>
#include <stdexcept>
#include <string>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  auto add_one = system.spawn([](int x) { return x + 1; });
  auto halve = system.spawn([](int x) {
    if (x % 2 != 0) throw std::domain_error(std::to_string(x) + " is odd");
    return x / 2;
  });
  auto describe = system.spawn([](int x) { return "the result is " + std::to_string(x); });

  auto pipeline = describe * halve * add_one;  // describe(halve(add_one(x)))
  auto answer = troupe::request<std::string>(pipeline, 41).get();
  std::cout << "pipeline(41): " << answer << "\n";

  // 42 + 1 is odd: halve throws, and the requester gets its error instead of a string.
  troupe::errc failure = troupe::errc::none;
  try {
    troupe::request<std::string>(pipeline, 42).get();
  } catch (const troupe::error& e) {
    failure = e.code();
    std::cout << "pipeline(42) failed: " << e.what() << "\n";
  }
  bool ok = answer == "the result is 21" && failure == troupe::errc::unhandled_exception;
  std::cout << "pipeline results as expected: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
