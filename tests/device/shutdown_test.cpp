// The actor system's destructor waits for device commands in flight: an actor that waits for
// one, and nothing else, is not ended while the device still runs it.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "device_fixture.hpp"
#include "troupe/core/request.hpp"

namespace troupe::test {
namespace {

using device_shutdown_test = ::testing::TestWithParam<std::string>;

/// A single work item that runs for a while: a chain of dependent steps that no compiler can
/// fold (the shift makes it non-linear). x[0] = value; x[1] the chain's end, so it is computed.
const kernel_sources& long_kernels() {
  static const kernel_sources sources{
      R"(
__kernel void run_long(__global uint* x, uint value, uint rounds) {
  uint acc = x[1];
  for (uint r = 0; r < rounds; ++r) acc = acc * 1664525u + 1013904223u + (acc >> 7);
  x[0] = value;
  x[1] = acc;
}
)",
      R"(
extern "C" __global__ void run_long(unsigned* x, unsigned value, unsigned rounds) {
  unsigned acc = x[1];
  for (unsigned r = 0; r < rounds; ++r) acc = acc * 1664525u + 1013904223u + (acc >> 7);
  x[0] = value;
  x[1] = acc;
}
)"};
  return sources;
}

TEST_P(device_shutdown_test, waits_for_an_actor_awaiting_a_long_device_command) {
  auto sys = std::make_unique<actor_system>(device_config());
  auto dev = sys->devices()[std::stoul(GetParam().substr(0, GetParam().find('_')))];
  auto p = dev.compile(long_kernels().for_device(dev)).get();
  auto flag = dev.allocate<unsigned>(2);
  flag.write(std::vector<unsigned>{0, 1}).get();
  std::atomic<unsigned> got{0};
  std::atomic<bool> ended{false};
  std::atomic<errc> reason{errc::none};
  {
    auto waiter = sys->spawn([&](event_based_actor* self) {
      // Long beside the old shutdown's 30 ms of quiet; only the device can wake this actor,
      // through a continuation that runs on the device layer's completion thread.
      auto done = dev.launch(p, "run_long", nd_range{{1}}, flag, 7u, 1u << 26);
      flag.read(after(done))
          .then(inline_execution, [handle = self->self()](future<std::vector<unsigned>> read) {
            send(handle, read.get().at(0));
          });
      return behavior{[self, &got](unsigned value) {
        got = value;
        self->quit();
      }};
    });
    waiter->attach_hook([&](const error& why) {
      reason = why.code();
      ended = true;
    });
  }
  sys.reset();  // waits for the command, then for the actor
  EXPECT_TRUE(ended.load());
  EXPECT_EQ(std::string{to_string(reason.load())}, "none");
  EXPECT_EQ(got.load(), 7u);
}

INSTANTIATE_TEST_SUITE_P(devices, device_shutdown_test, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(device_shutdown_test);

}  // namespace
}  // namespace troupe::test
