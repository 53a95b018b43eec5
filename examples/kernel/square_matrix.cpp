// The second listing of the paper: a message type of the program's own. An input mapping
// turns two square_matrix messages into the kernel's arguments and its nd_range; an output
// mapping turns the result back into a square_matrix.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <tuple>
#include <vector>

#include "../device/pick_device.hpp"
#include "example_kernels.hpp"

using namespace troupe::kernel;

struct square_matrix {
  std::size_t n = 0;
  std::vector<float> values;
};

int main() {
  troupe::actor_system sys;
  auto dev = pick_device(sys);
  if (!dev) return 0;

  using arguments = std::tuple<troupe::nd_range, std::vector<float>, std::vector<float>, unsigned>;
  auto multiply = sys.spawn_kernel(
      source{example_kernels::m_mult_opencl, example_kernels::m_mult_cuda, ""}, "m_mult",
      troupe::nd_range{{1}}, on(*dev),
      // Pre-processing: matrices of one size only; the range is the matrix.
      map_input([](const square_matrix& a, const square_matrix& b) -> std::optional<arguments> {
        if (a.n != b.n) return std::nullopt;
        return arguments{troupe::nd_range{{a.n, a.n}}, a.values, b.values,
                         static_cast<unsigned>(a.n)};
      }),
      // Post-processing: the product as a square_matrix again.
      map_output([](std::vector<float> c) {
        auto n = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(c.size()))));
        return square_matrix{n, std::move(c)};
      }),
      in<float>{}, in<float>{}, out<float>{}, priv<unsigned, val>{});

  const std::size_t n = 8;
  square_matrix twice{n, std::vector<float>(n * n, 0.0f)};
  square_matrix ones{n, std::vector<float>(n * n, 1.0f)};
  for (std::size_t i = 0; i < n; ++i) twice.values[i * n + i] = 2.0f;
  auto product = troupe::request<square_matrix>(multiply, twice, ones).get();
  bool right = product.n == n;
  for (float v : product.values) right = right && v == 2.0f;
  std::cout << "2I * ones on " << n << " x " << n << ": " << (right ? "ok" : "WRONG") << "\n";

  // Matrices of different sizes: the input mapping refuses them, and the request fails.
  try {
    troupe::request<square_matrix>(multiply, twice, square_matrix{3, std::vector<float>(9)}).get();
    right = false;
  } catch (const troupe::error& e) {
    std::cout << "refused as expected: " << e.what() << "\n";
  }
  return right ? EXIT_SUCCESS : EXIT_FAILURE;
}
