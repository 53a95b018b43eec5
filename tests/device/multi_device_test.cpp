#include <numeric>

#include "device_fixture.hpp"

namespace troupe::test {
namespace {

TEST(multi_device, copies_between_every_pair_of_devices) {
  actor_system sys{device_config()};
  auto all = sys.devices();
  if (all.size() < 2) GTEST_SKIP() << "one device only (set POCL_DEVICES=\"pthread pthread\")";
  std::vector<int> data(100000);
  std::iota(data.begin(), data.end(), 1);
  for (const auto& from : all) {
    for (const auto& to : all) {
      if (from == to) continue;
      auto a = from.allocate<int>(data.size());
      auto b = to.allocate<int>(data.size());
      auto w = a.write(data);
      auto c = a.copy_to(b, after(w));
      EXPECT_EQ(b.read(after(c)).get(), data) << from.name() << " -> " << to.name();
    }
  }
}

// 12 MB, past detail::fresh_memory_threshold: a copy without peer access goes through host
// memory that several threads prepare first. Offsets on both sides, so a shifted part would show.
TEST(multi_device, a_large_copy_between_devices_arrives_whole_at_its_offset) {
  actor_system sys{device_config()};
  auto all = sys.devices();
  if (all.size() < 2) GTEST_SKIP() << "one device only (set POCL_DEVICES=\"pthread pthread\")";
  const std::size_t count = 3 << 20;  // ints
  std::vector<int> data(count + 1000);
  std::iota(data.begin(), data.end(), -500);
  auto a = all[0].allocate<int>(data.size());
  auto b = all[1].allocate<int>(count + 7);
  auto w = a.write(data);
  auto c = a.copy_to(1000, b, 7, count, after(w));
  const std::vector<int> expected(data.begin() + 1000, data.end());
  EXPECT_EQ(b.read(7, count, after(c)).get(), expected);
}

TEST(multi_device, a_buffer_of_another_device_is_refused_by_name) {
  actor_system sys{device_config()};
  auto all = sys.devices();
  if (all.size() < 2) GTEST_SKIP() << "one device only (set POCL_DEVICES=\"pthread pthread\")";
  auto p = all[0].compile(test_kernels().for_device(all[0])).get();
  auto other = all[1].allocate<int>(4);
  try {
    all[0].launch(p, "increment", nd_range{{4}}, other, 4u).get();
    FAIL() << "a launch with another device's buffer did not fail";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string{e.what()}.find("argument 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace troupe::test
