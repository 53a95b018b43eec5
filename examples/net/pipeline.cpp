// A pipeline whose stages run on different nodes: `b * a` sends each input through `a` on one
// node, then `b` on another, and the result comes back to the caller. Vectors cross as they lie.
//   mpirun -n 2 build/release/examples/net_pipeline
#include <iostream>
#include <numeric>
#include <vector>

#include "troupe/net.hpp"

using troupe::behavior;
using troupe::event_based_actor;

int main() {
  troupe::config cfg;
  cfg.add_actor_type("square", [](event_based_actor*) -> behavior {
    return {[](std::vector<double>& v) {
      for (auto& x : v) x *= x;
      return std::move(v);
    }};
  });
  cfg.add_actor_type("sum", [](event_based_actor*) -> behavior {
    return {[](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }};
  });
  troupe::actor_system sys{cfg};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return 0;

  auto square = sys.spawn_on(1 % nodes.size(), "square").get();
  auto sum = sys.spawn_on(nodes.size() - 1, "sum").get();
  auto sum_of_squares = sum * square;  // square first, then sum
  std::vector<double> input(100000);   // squares and their sum stay exact in a double
  std::iota(input.begin(), input.end(), 0.0);
  const double result = troupe::request<double>(sum_of_squares, input).get();
  const double n = static_cast<double>(input.size());
  const double expected = (n - 1) * n * (2 * n - 1) / 6;  // 0^2 + 1^2 + ... + (n-1)^2
  std::cout << "pipeline: sum of squares of 0.." << input.size() - 1 << " = " << result
            << " (stages on nodes " << 1 % nodes.size() << " and " << nodes.size() - 1 << ")\n";
  return result == expected ? 0 : 1;
}
