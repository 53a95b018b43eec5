// bench-kernel's check of a multiply, against a product computed here element by element.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel/kernel_bench.hpp"

namespace troupe::bench::kernel_bench {
namespace {

std::vector<float> reference_product(const std::vector<float>& a, const std::vector<float>& b,
                                     std::size_t n) {
  std::vector<float> c(n * n, 0.0f);
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x)
      for (std::size_t k = 0; k < n; ++k) c[y * n + x] += a[y * n + k] * b[k * n + x];
  return c;
}

constexpr std::size_t n = 67;  // no power of two: a row and a column differ in length from 64

TEST(CheckProduct, AcceptsTheProduct) {
  const auto a = matrix(n, 5), b = matrix(n, 3);
  const auto c = reference_product(a, b, n);
  for (int run = 0; run < 20; ++run) EXPECT_EQ(check_product(a, b, c.data(), n), "");
}

TEST(CheckProduct, RefusesTheProductInTheOtherOrder) {
  const auto a = matrix(n, 5), b = matrix(n, 3);
  const auto swapped = reference_product(b, a, n);
  EXPECT_NE(reference_product(a, b, n), swapped);
  const std::string why = check_product(a, b, swapped.data(), n);
  EXPECT_NE(why.find("expected"), std::string::npos) << why;
}

TEST(CheckProduct, FindsAWrongElementInAnyRow) {
  // Every row but one is right; the sample's whole row finds the wrong one when it lands there,
  // so over many runs each wrong element is found at least once.
  const auto a = matrix(n, 5), b = matrix(n, 3);
  auto c = reference_product(a, b, n);
  c[13 * n + 41] += 1.0f;
  int found = 0;
  for (int run = 0; run < 2000; ++run) {
    const std::string why = check_product(a, b, c.data(), n);
    if (why.empty()) continue;
    EXPECT_EQ(why, "c[13][41] is " + std::to_string(c[13 * n + 41]) + ", expected " +
                       std::to_string(c[13 * n + 41] - 1.0f));
    ++found;
  }
  EXPECT_GT(found, 0);
}

}  // namespace
}  // namespace troupe::bench::kernel_bench
