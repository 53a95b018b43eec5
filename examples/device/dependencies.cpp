// dependencies: a device pipeline made of futures, with no waiting in between. Each command
// takes after(...) the futures it must wait for: one that a command of the same device made is
// waited for on the device; any other (here a promise set by another thread) is awaited by the
// runtime without blocking a thread. then() continues on the host once the result is there.
#include <chrono>
#include <iostream>
#include <numeric>
#include <span>
#include <thread>
#include <vector>

#include "pick_device.hpp"
#include "troupe/troupe.hpp"

const char* const opencl_source = R"(
__kernel void add_one(__global int* x, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] += 1;
}
__kernel void twice(__global int* x, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] *= 2;
})";
const char* const cuda_source = R"(
extern "C" __global__ void add_one(int* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
extern "C" __global__ void twice(int* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2;
})";

int main(int argc, char** argv) {
  troupe::actor_system sys{troupe::config{argc, argv}};
  auto picked = pick_device(sys);
  if (!picked) return 0;
  auto dev = *picked;
  auto prog =
      dev.compile(dev.backend() == troupe::backend::cuda ? cuda_source : opencl_source).get();

  // write -> add_one -> twice -> read, every step on another queue, so that only after(...)
  // orders them; then() sums the result on the host. Nothing here waits until get().
  const unsigned n = 1000;
  std::vector<int> input(n);
  std::iota(input.begin(), input.end(), 0);
  auto q1 = dev.make_queue();
  auto q2 = dev.make_queue();
  auto x = dev.allocate<int>(n);
  auto written = q1.write(x, std::span<const int>{input});
  auto plus_one = q2.launch(prog, "add_one", troupe::nd_range{{n}}, troupe::after(written), x, n);
  auto doubled = q1.launch(prog, "twice", troupe::nd_range{{n}}, troupe::after(plus_one), x, n);
  auto sum = q2.read(x, troupe::after(doubled)).then([](std::vector<int> values) {
    return std::accumulate(values.begin(), values.end(), 0);
  });

  // A host-side dependency: the launch waits for a promise that another thread sets later.
  troupe::promise<void> go;
  auto y = dev.allocate<int>(n);
  auto y_written = y.write(input);
  auto gated = dev.launch(prog, "add_one", troupe::nd_range{{n}},
                          troupe::after(y_written, go.get_future()), y, n);
  auto gated_result = y.read(troupe::after(gated));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  bool waited = !gated.is_ready();
  std::cout << "50 ms later, before the promise is set, the gated launch has run: "
            << (waited ? "no" : "YES") << "\n";
  std::thread opener{[&go] { go.set_value(); }};
  opener.join();
  auto gated_values = gated_result.get();

  int total = sum.get();
  int expected = 0;
  for (int v : input) expected += (v + 1) * 2;
  std::cout << "sum of (i + 1) * 2 for i < " << n << ": " << total << " (expected " << expected
            << ")\n";
  std::vector<int> plus_one_expected(n);
  std::iota(plus_one_expected.begin(), plus_one_expected.end(), 1);
  bool gated_ok = gated_values == plus_one_expected;
  std::cout << "after the promise was set, the gated launch ran: " << (gated_ok ? "yes" : "no")
            << "\n";
  return total == expected && waited && gated_ok ? 0 : 1;
}
