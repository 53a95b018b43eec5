// The tour's kernel actor section: a pipeline of kernel actors on device memory.
#include <chrono>
#include <string>
#include <vector>

#include "example_kernels.hpp"
#include "tour.hpp"

namespace tour {
namespace {

/// scale and add_one, in one program per backend.
const troupe::kernel::source& tour_kernels() {
  static const troupe::kernel::source kernels{
      std::string{example_kernels::scale_opencl} + example_kernels::add_one_opencl,
      std::string{example_kernels::scale_cuda} + example_kernels::add_one_cuda, ""};
  return kernels;
}

}  // namespace

void tour_kernel_actors(troupe::actor_system& system, report& out) {
  out.section("kernel actors (kernel layer)");
  namespace k = troupe::kernel;  // `out` is the report here
  for (const auto& dev : system.devices()) {
    // Three kernel actors composed: the data goes to the device once, stays there between the
    // stages (a mem_ref carries each stage's event to the next), and comes back once.
    const std::size_t n = 1 << 16;
    const troupe::nd_range range{{n}};
    auto scale = system.spawn_kernel(tour_kernels(), "scale", range, k::on(dev), k::in<float>{},
                                     k::out<float, k::ref>{}, k::priv<float>{2.0f});
    auto add_one = system.spawn_kernel(tour_kernels(), "add_one", range, k::on(dev),
                                       k::in_out<float, k::ref, k::ref>{});
    auto back = system.spawn_kernel(tour_kernels(), "scale", range, k::on(dev),
                                    k::in<float, k::ref>{}, k::out<float>{}, k::priv<float>{0.5f});
    auto pipeline = back * add_one * scale;
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 100);
    auto start = std::chrono::steady_clock::now();
    auto y = troupe::request<std::vector<float>>(pipeline, x).get();
    auto elapsed = std::chrono::steady_clock::now() - start;
    bool right = y.size() == n;
    for (std::size_t i = 0; i < n && right; ++i) right = y[i] == x[i] + 0.5f;
    out.check(right, text(dev.name(), ": back * add_one * scale, three kernel actors on device ",
                          "memory: y = (2x + 1) / 2 on ", n, " floats in ", milliseconds(elapsed),
                          " (compiling or loading the programs included)"));
    // A message the kernel actor does not take is an error response, not a crash.
    try {
      troupe::request<std::vector<float>>(scale, std::string{"not floats"}).get();
      out.check(false, "a kernel actor accepted a string");
    } catch (const troupe::error& e) {
      out.check(e.code() == troupe::errc::unexpected_message,
                text("a wrong message type is an error response: ", e.what()));
    }
  }
}

}  // namespace tour
