// hpxcl_sum: the sum example of the HPXCL paper (Diehl et al., "Integration of CUDA processing
// within the C++ library for parallelism and concurrency (HPX)"), ported to troupe. Three device
// buffers (the n numbers, n itself, and the sum); two writes of inputs; a compile; a launch of
// kernel "sum" once the writes are done; a read of the sum. Every step returns a future: where
// HPXCL waited for them all with hpx::wait_all, the launch here names them with after(...).
#include <iostream>
#include <numeric>
#include <vector>

#include "pick_device.hpp"
#include "troupe/troupe.hpp"

// Each work item adds every (global size)-th number to *sum, atomically.
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
  auto picked = pick_device(sys);
  if (!picked) return 0;
  auto dev = *picked;

  const unsigned n = 100000;
  std::vector<unsigned> numbers(n);
  for (unsigned i = 0; i < n; ++i) numbers[i] = i % 1000;  // 0, 1, ..., 999, 0, 1, ...
  const std::vector<unsigned> length{n};

  auto prog = dev.compile(dev.backend() == troupe::backend::cuda ? cuda_source : opencl_source);
  auto numbers_buffer = dev.allocate<unsigned>(n);
  auto length_buffer = dev.allocate<unsigned>(1);
  auto sum_buffer = dev.allocate<unsigned>(1);
  auto numbers_written = numbers_buffer.write(numbers);
  auto length_written = length_buffer.write(length);
  auto sum_zeroed = sum_buffer.fill(0u);

  // The paper's shape: one block of 32 threads (a cuda_grid runs on OpenCL devices, too).
  auto summed = dev.launch(prog.get(), "sum", troupe::cuda_grid{{1, 1, 1}, {32, 1, 1}},
                           troupe::after(numbers_written, length_written, sum_zeroed),
                           numbers_buffer, sum_buffer, length_buffer);
  unsigned device_sum = sum_buffer.read(troupe::after(summed)).get().at(0);

  unsigned host_sum = std::accumulate(numbers.begin(), numbers.end(), 0u);
  std::cout << "sum of " << n << " numbers: device " << device_sum << ", CPU " << host_sum
            << (device_sum == host_sum ? " (the same)\n" : " (DIFFERENT)\n");
  return device_sum == host_sum ? 0 : 1;
}
