// A program outside the troupe tree, built against an installed troupe (see tests/install).
// It sets no language standard itself: troupe::troupe and troupe.pc must bring C++20 along.
#if __cplusplus < 202002L
#error "troupe consumer: expected C++20 from troupe::troupe / troupe.pc, found an older standard"
#endif

#include <troupe/troupe.hpp>

#include <cstdio>

int main() {
  troupe::actor_system sys{troupe::config{}};
  auto adder = sys.spawn([](int a, int b) { return a + b; });
  int sum = troupe::request<int>(adder, 1, 2).get();
  std::printf("troupe consumer: 1 + 2 = %d\n", sum);
  if (sum != 3) {
    std::fprintf(stderr, "troupe consumer: expected 1 + 2 = 3, found %d\n", sum);
    return 1;
  }
  return 0;
}
