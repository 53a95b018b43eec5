// The tour's device section: the device layer's futurized API on every device found.
#include <chrono>
#include <vector>

#include "example_kernels.hpp"
#include "tour.hpp"

namespace tour {
namespace {

/// The same kernel for both backends: OpenCL C, and CUDA C++ for NVRTC.
const char* saxpy_source(troupe::backend b) {
  return b == troupe::backend::cuda ? example_kernels::saxpy_cuda : example_kernels::saxpy_opencl;
}

}  // namespace

void tour_devices(troupe::actor_system& system, report& out) {
  out.section("devices (device layer)");
  auto all = system.devices();
  for (const auto& d : all) {
    const auto& info = d.info();
    auto level = info.backend == troupe::backend::cuda
                     ? "compute capability " + troupe::to_string(info.compute_capability)
                     : "OpenCL " + troupe::to_string(info.opencl_version);
    out.note(text(troupe::to_string(info.backend), " ", troupe::to_string(info.type), ": ",
                  info.name, " (", info.vendor, "; ", level, "; ", info.compute_units,
                  " compute units; ", info.global_memory >> 20, " MiB)"));
  }
  for (const auto& u : all.unavailable())
    out.note(text(troupe::to_string(u.backend), ": no devices (", u.reason, ")"));
  out.check(true, text("discovered ", counted(all.size(), "device")));

  // A futurized pipeline on each device: every step returns a future, and each waits for the
  // previous one on the device, not on this thread.
  for (const auto& dev : all) {
    const unsigned n = 1 << 20;
    std::vector<float> x(n), y(n);
    for (unsigned i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 1000);
      y[i] = 1.0f;
    }
    auto start = std::chrono::steady_clock::now();
    auto program = dev.compile(saxpy_source(dev.backend()));
    auto dx = dev.allocate<float>(n);
    auto dy = dev.allocate<float>(n);
    auto wx = dx.write(x);
    auto wy = dy.write(y);
    auto compiled = program.get();
    auto first = dev.launch(compiled, "saxpy", troupe::nd_range{{n}}, troupe::after(wx, wy), 2.0f,
                            dx, dy, n);
    auto second =
        dev.launch(compiled, "saxpy", troupe::nd_range{{n}}, troupe::after(first), 0.5f, dx, dy, n);
    auto result = dy.read(troupe::after(second)).get();
    auto elapsed = std::chrono::steady_clock::now() - start;
    bool right = true;
    for (unsigned i = 0; i < n && right; ++i) right = result[i] == 2.5f * x[i] + 1.0f;
    out.check(right, text(dev.name(), ": write, write, compile, launch, launch, read as futures: ",
                          "y = 2.5x + 1 on ", n, " floats in ", milliseconds(elapsed),
                          compiled.from_cache() ? " (program from the disk cache)" : ""));
  }
}

}  // namespace tour
