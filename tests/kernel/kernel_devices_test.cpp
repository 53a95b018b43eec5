// A kernel actor on several devices: requests spread round-robin or by measured throughput,
// mem_refs stay with their device, and one from another device is refused unless moved.
// Needs two devices: CI runs it with POCL_DEVICES="pthread pthread".
#include <map>
#include <numeric>

#include "kernel_fixture.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

class kernel_devices : public ::testing::Test {
 protected:
  kernel_devices() : sys(device_config()) {
    for (const auto& d : sys.devices().of(backend::opencl)) devices.push_back(d);
  }
  void SetUp() override {
    if (devices.size() < 2)
      GTEST_SKIP() << "needs two OpenCL devices (POCL_DEVICES=\"pthread pthread\")";
    devices.resize(2);
  }
  actor scaler(balance policy) {
    return sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{1024}}, on(devices, policy),
                            in<float>{}, out<float, ref>{}, priv<float>{2});
  }
  actor_system sys;
  std::vector<device> devices;
};

TEST_F(kernel_devices, round_robin_alternates_devices) {
  auto scale = scaler(balance::round_robin);
  std::map<std::string, int> per_device;
  for (int r = 0; r < 6; ++r) {
    auto y = request<mem_ref<float>>(scale, std::vector<float>(1024, static_cast<float>(r))).get();
    EXPECT_TRUE(y.device() == devices[static_cast<std::size_t>(r) % 2]) << "request " << r;
    EXPECT_EQ(y.read().get(), std::vector<float>(1024, 2.0f * static_cast<float>(r)));
  }
}

TEST_F(kernel_devices, throughput_balancing_uses_every_device_and_stays_correct) {
  auto scale = scaler(balance::throughput);
  std::vector<future<mem_ref<float>>> pending;
  for (int r = 0; r < 40; ++r) {
    pending.push_back(
        request<mem_ref<float>>(scale, std::vector<float>(1024, static_cast<float>(r))));
  }
  std::map<int, int> per_device;
  for (int r = 0; r < 40; ++r) {
    auto y = pending[static_cast<std::size_t>(r)].get();
    per_device[y.device() == devices[0] ? 0 : 1]++;
    ASSERT_EQ(y.read().get(), std::vector<float>(1024, 2.0f * static_cast<float>(r)));
  }
  EXPECT_GT(per_device[0], 0);
  EXPECT_GT(per_device[1], 0);
}

TEST_F(kernel_devices, a_mem_ref_runs_where_its_data_is_or_moves_explicitly) {
  auto produce_on_first =
      sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{64}}, on(devices[0]), in<float>{},
                       out<float, ref>{}, priv<float>{1});
  auto read_on_second =
      sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{64}}, on(devices[1]),
                       in<float, ref>{}, out<float>{}, priv<float>{3});
  auto both = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{64}}, on(devices),
                               in<float, ref>{}, out<float, ref>{}, priv<float>{5});
  auto data = request<mem_ref<float>>(produce_on_first, std::vector<float>(64, 1)).get();
  // Refused on the other device, naming both.
  auto refused = error_of(request<std::vector<float>>(read_on_second, data));
  EXPECT_EQ(refused.code(), errc::invalid_argument);
  EXPECT_NE(std::string{refused.what()}.find("copy_to"), std::string::npos) << refused.what();
  // Moved explicitly, it is accepted.
  EXPECT_EQ(request<std::vector<float>>(read_on_second, data.copy_to(devices[1])).get(),
            std::vector<float>(64, 3));
  // An actor on both devices runs it where the data is, whatever the turn.
  for (int r = 0; r < 3; ++r) {
    auto y = request<mem_ref<float>>(both, data).get();
    EXPECT_TRUE(y.device() == devices[0]);
  }
}

}  // namespace
}  // namespace troupe::test
