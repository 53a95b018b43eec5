// kernel_pipeline: kernel actors on the devices of two nodes. The first stage runs on node 1's
// device and leaves its result there (a mem_ref); data stays bound to its device, so it is moved
// to this node's device explicitly with copy_to before the second stage takes it.
//   mpirun -n 2 build/release/examples/net_kernel_pipeline
#include <iostream>
#include <numeric>
#include <vector>

#include "troupe/troupe.hpp"

using namespace troupe::kernel;

const troupe::kernel::source scale{R"(
__kernel void scale(__global const float* x, __global float* y, float by) {
  y[get_global_id(0)] = x[get_global_id(0)] * by;
})",
                                   R"(
extern "C" __global__ void scale(const float* x, float* y, float by) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] * by;
})",
                                   ""};

int main(int argc, char** argv) {
  troupe::actor_system sys{troupe::config{argc, argv}};
  const auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return 0;
  const troupe::node_id other = nodes.size() > 1 ? 1 : 0;
  auto theirs = sys.devices().on_node(other);
  auto ours = sys.devices().local();
  if (theirs.empty() || ours.empty()) {
    std::cout << "a device on node 0 and on node " << other << " is needed; nothing to do\n";
    return 0;
  }
  const std::size_t n = 1 << 16;
  const auto range = troupe::nd_range{{n}};
  // Stage 1 on node 1's device: values in, device-resident result out.
  auto triple = sys.spawn_kernel(scale, "scale", range, on(theirs.front()), in<float, val>{},
                                 out<float, ref>{}, priv<float>{3.0f});
  // Stage 2 on this node's device: device-resident input, values out.
  auto halve = sys.spawn_kernel(scale, "scale", range, on(ours.front()), in<float, ref>{},
                                out<float, val>{}, priv<float>{0.5f});

  std::vector<float> x(n);
  std::iota(x.begin(), x.end(), 0.0f);
  auto there = troupe::request<mem_ref<float>>(triple, x).get();
  std::cout << "stage 1 left " << there.size() << " floats on '" << there.device().name()
            << "' of node " << there.device().info().node << "\n";
  auto here = there.copy_to(ours.front());  // the explicit move between the nodes' devices
  auto y = troupe::request<std::vector<float>>(halve, here).get();

  bool right = y.size() == n;
  for (std::size_t i = 0; right && i < n; ++i) right = y[i] == x[i] * 1.5f;
  std::cout << "stage 2 on '" << ours.front().name() << "' of node 0: x * 3 * 0.5 "
            << (right ? "as expected\n" : "WRONG\n");
  return right ? 0 : 1;
}
