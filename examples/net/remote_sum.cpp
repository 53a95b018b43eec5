// remote_sum: the HPXCL paper's sum (examples/device/hpxcl_sum.cpp) on a device of another node.
// Under mpirun, sys.devices() lists every node's devices; one of node 1 is used exactly as a
// local one, every step a future. Its commands go to node 1, which runs them on its device.
//   mpirun -n 2 build/release/examples/net_remote_sum
#include <iostream>
#include <numeric>
#include <vector>

#include "troupe/troupe.hpp"

const char* const opencl_source = R"(
__kernel void sum(__global const uint* numbers, __global uint* sum, __global const uint* n) {
  for (size_t i = get_global_id(0); i < n[0]; i += get_global_size(0)) atomic_add(sum, numbers[i]);
})";
const char* const cuda_source = R"(
extern "C" __global__ void sum(const unsigned* numbers, unsigned* sum, const unsigned* n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n[0]; i += gridDim.x * blockDim.x)
    atomicAdd(sum, numbers[i]);
})";

int main(int argc, char** argv) {
  troupe::actor_system sys{troupe::config{argc, argv}};
  const auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return 0;  // the other nodes serve their devices
  const troupe::node_id other = nodes.size() > 1 ? 1 : 0;
  auto theirs = sys.devices().on_node(other);
  if (theirs.empty()) {
    std::cout << "node " << other << " has no device; nothing to do\n";
    return 0;
  }
  const auto& dev = theirs.front();
  std::cout << "using '" << dev.name() << "' of node " << dev.info().node
            << (dev.info().local ? " (this process's own)" : " (another process's)") << "\n";

  const unsigned n = 100000;
  std::vector<unsigned> numbers(n);
  for (unsigned i = 0; i < n; ++i) numbers[i] = i % 1000;
  const std::vector<unsigned> length{n};

  auto prog = dev.compile(dev.backend() == troupe::backend::cuda ? cuda_source : opencl_source);
  auto numbers_buffer = dev.allocate<unsigned>(n);
  auto length_buffer = dev.allocate<unsigned>(1);
  auto sum_buffer = dev.allocate<unsigned>(1);
  auto numbers_written = numbers_buffer.write(numbers);
  auto length_written = length_buffer.write(length);
  auto sum_zeroed = sum_buffer.fill(0u);
  auto summed = dev.launch(prog.get(), "sum", troupe::cuda_grid{{1, 1, 1}, {32, 1, 1}},
                           troupe::after(numbers_written, length_written, sum_zeroed),
                           numbers_buffer, sum_buffer, length_buffer);
  unsigned device_sum = sum_buffer.read(troupe::after(summed)).get().at(0);

  unsigned host_sum = std::accumulate(numbers.begin(), numbers.end(), 0u);
  std::cout << "sum of " << n << " numbers on node " << other << ": " << device_sum << ", CPU "
            << host_sum << (device_sum == host_sum ? " (the same)\n" : " (DIFFERENT)\n");
  return device_sum == host_sum ? 0 : 1;
}
