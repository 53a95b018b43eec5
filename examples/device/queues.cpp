// queues: overlapping work with several queues. A device_queue runs its commands in order, one
// after another; commands of different queues may run at the same time (one part's copy with
// another part's kernel). Here an array is cut into 4 parts; each part is copied in, squared
// and copied back on a queue of its own, and when_all waits for all of it.
#include <cstddef>
#include <iostream>
#include <span>
#include <vector>

#include "pick_device.hpp"
#include "troupe/troupe.hpp"

const char* const opencl_source = R"(
__kernel void square(__global int* x, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] *= x[i];
})";
const char* const cuda_source = R"(
extern "C" __global__ void square(int* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= x[i];
})";

int main(int argc, char** argv) {
  troupe::actor_system sys{troupe::config{argc, argv}};
  auto picked = pick_device(sys);
  if (!picked) return 0;
  auto dev = *picked;
  auto prog =
      dev.compile(dev.backend() == troupe::backend::cuda ? cuda_source : opencl_source).get();

  const std::size_t n = 1 << 20, parts = 4, part_size = n / parts;
  std::vector<int> input(n), output(n, 0);
  for (std::size_t i = 0; i < n; ++i) input[i] = static_cast<int>(i % 1000);

  std::vector<troupe::future<void>> steps;
  for (std::size_t p = 0; p < parts; ++p) {
    auto queue = dev.make_queue();  // in order: no after(...) needed within one queue
    auto part = dev.allocate<int>(part_size);
    auto count = static_cast<unsigned>(part_size);
    steps.push_back(
        queue.write(part, std::span<const int>{input}.subspan(p * part_size, part_size)));
    steps.push_back(queue.launch(prog, "square", troupe::nd_range{{part_size}}, part, count));
    steps.push_back(
        queue.read_into(part, std::span<int>{output}.subspan(p * part_size, part_size)));
  }  // the queue and buffer handles may go: the commands keep what they use alive
  std::cout << parts << " queues, " << steps.size() << " commands submitted; waiting for all\n";
  for (auto& step : troupe::when_all(std::move(steps)).get()) step.get();  // rethrows a failure

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += output[i] != input[i] * input[i] ? 1 : 0;
  std::cout << n << " numbers squared in " << parts << " parts, " << wrong << " wrong\n";
  return wrong == 0 ? 0 : 1;
}
