// combinators: waiting for several futures. when_all waits for all (as a tuple, or over a
// vector), when_any for the first, and dataflow calls a function with the values once all its
// inputs are ready. Here the futures are answers of actors.
#include <iostream>
#include <tuple>
#include <vector>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  auto square = system.spawn([](int x) { return x * x; });
  auto ask = [&](int x) { return troupe::request<int>(square, x); };

  // Variadic: a future of a tuple of ready futures, in argument order.
  auto [two, three] = troupe::when_all(ask(2), ask(3)).get();
  int pair_sum = two.get() + three.get();
  std::cout << "when_all(2*2, 3*3): " << pair_sum << "\n";

  // Over a vector: any number of futures of one type.
  std::vector<troupe::future<int>> squares;
  for (int i = 1; i <= 10; ++i) squares.push_back(ask(i));
  int sum_of_squares = 0;
  for (auto& f : troupe::when_all(std::move(squares)).get()) sum_of_squares += f.get();
  std::cout << "when_all over 1..10: sum of squares " << sum_of_squares << "\n";

  // when_any: the index of the first ready input; the others may still be running.
  std::vector<troupe::future<int>> racers;
  for (int i = 1; i <= 4; ++i) racers.push_back(ask(i));
  auto first = troupe::when_any(std::move(racers)).get();
  int winner = first.futures[first.index].get();
  std::cout << "when_any: input " << first.index << " was first, with " << winner << "\n";

  // dataflow: f(values...) once all inputs are ready; plain values pass through.
  auto total = troupe::dataflow([](int a, int b, int c) { return a + b + c; }, ask(4), ask(5), 100);
  int dataflow_sum = total.get();
  std::cout << "dataflow(4*4 + 5*5 + 100): " << dataflow_sum << "\n";

  bool ok = pair_sum == 13 && sum_of_squares == 385 &&
            winner == static_cast<int>((first.index + 1) * (first.index + 1)) &&
            dataflow_sum == 141;
  std::cout << "all combinators gave the expected results: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
