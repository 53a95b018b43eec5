// A kernel actor's val output is read back by the device's copy thread where the driver may block
// in the read until the kernel and the copy are done (NVIDIA's OpenCL): the actor's worker takes
// the next message meanwhile. PoCL does not block, so a stand-in holds the issuing thread, and
// TROUPE_OPENCL_READING=copy-thread treats PoCL's reads as NVIDIA's are.
#include <numeric>

#include "../device/blocking_read_stand_in.hpp"
#include "kernel_fixture.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

TEST(kernel_copy_thread, a_val_output_is_read_off_the_worker_which_takes_the_next_message) {
  environment_setting reading{"TROUPE_OPENCL_READING", "copy-thread"};
  actor_system sys{device_config(1)};
  auto opencl = sys.devices().of(backend::opencl);
  if (opencl.empty()) GTEST_SKIP() << "no OpenCL device";
  auto dev = opencl.front();
  const std::size_t n = 1000;
  auto add = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev), in<float>{},
                              in<float>{}, out<float>{});
  std::vector<float> a(n), b(n);
  std::iota(a.begin(), a.end(), 1.0f);
  std::iota(b.begin(), b.end(), -0.5f);
  blocking_read_stand_in driver{dev};
  auto sum = request<std::vector<float>>(add, a, b);
  ASSERT_TRUE(driver.wait_for_a_read()) << "the output was read on the scheduler's worker";
  // The copy thread is held inside the read, as NVIDIA's driver holds it: the one worker is free.
  auto echo = sys.spawn([](int x) { return x + 1; });
  EXPECT_EQ(request<int>(echo, 41).get(), 42);
  driver.release();
  auto c = std::move(sum).get();
  ASSERT_EQ(c.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  EXPECT_EQ(driver.on_workers(), 0);
}

}  // namespace
}  // namespace troupe::test
