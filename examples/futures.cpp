// futures: troupe::promise and troupe::future without any actor. then() chains continuations;
// a continuation that returns a future is unwrapped (future<future<T>> becomes future<T>); an
// exception skips the value continuations and reaches the first one that takes the future.
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "troupe/troupe.hpp"

int main() {
  // A promise is the producing end; here another thread fulfils it.
  troupe::promise<int> answer;
  auto chained = answer.get_future()
                     .then([](int x) { return x * 2; })
                     .then([](int x) { return troupe::make_ready_future(x + 1); })  // unwrapped
                     .then([](int x) { return "value " + std::to_string(x); });
  std::thread producer{[&answer] { answer.set_value(20); }};
  producer.join();
  std::string text = chained.get();
  std::cout << "20 -> * 2 -> + 1 -> " << text << "\n";

  // Errors travel down the chain: the value continuations are skipped.
  bool skipped_ran = false;
  auto recovered = troupe::make_ready_future(1)
                       .then([](int) -> int { throw std::runtime_error("bad input"); })
                       .then([&](int x) {
                         skipped_ran = true;
                         return x;
                       })
                       .then([](troupe::future<int> ready) {
                         try {
                           return ready.get();
                         } catch (const std::exception& e) {
                           std::cout << "recovered from: " << e.what() << "\n";
                           return -1;
                         }
                       });
  int fallback = recovered.get();

  // A promise destroyed unsatisfied fails its future instead of leaving it waiting forever.
  troupe::errc broken = troupe::errc::none;
  troupe::future<int> orphan;
  {
    troupe::promise<int> forgotten;
    orphan = forgotten.get_future();
  }
  try {
    orphan.get();
  } catch (const troupe::error& e) {
    broken = e.code();
  }
  std::cout << "a forgotten promise gives " << troupe::to_string(broken) << "\n";

  bool ok = text == "value 41" && fallback == -1 && !skipped_ran &&
            broken == troupe::errc::broken_promise;
  std::cout << "futures behaved as expected: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
