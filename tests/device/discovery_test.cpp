#include "device_fixture.hpp"

namespace troupe::test {
namespace {

TEST(device_discovery, every_backend_offers_devices_or_says_why_not) {
  actor_system sys{device_config(1)};
  auto all = sys.devices();
  for (auto b : {backend::opencl, backend::cuda}) {
    bool has_devices = !all.of(b).empty();
    bool explained = false;
    for (const auto& u : all.unavailable())
      if (u.backend == b && !u.reason.empty()) explained = true;
    EXPECT_TRUE(has_devices || explained) << to_string(b);
  }
}

TEST(device_discovery, cuda_devices_are_present) {
  actor_system sys{device_config(1)};
  auto cuda = sys.devices().of(backend::cuda);
  if (cuda.empty()) {
    std::string why;
    for (const auto& u : cuda.unavailable())
      if (u.backend == backend::cuda) why = u.reason;
    GTEST_SKIP() << "no CUDA device here: " << why;
  }
  for (const auto& d : cuda) {
    EXPECT_GE(d.info().compute_capability, (version{3, 0})) << d.name();
    EXPECT_EQ(d.info().opencl_version, version{}) << d.name();
  }
}

TEST(device_discovery, device_info_is_filled_in) {
  actor_system sys{device_config(1)};
  auto all = sys.devices();
  if (all.empty()) GTEST_SKIP() << "no device of any backend here";
  for (const auto& d : all) {
    const auto& info = d.info();
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.vendor.empty()) << info.name;
    EXPECT_FALSE(info.driver.empty()) << info.name;
    EXPECT_GT(info.global_memory, 0u) << info.name;
    EXPECT_GT(info.compute_units, 0u) << info.name;
    EXPECT_GT(info.max_work_group_size, 0u) << info.name;
    if (info.backend == backend::opencl) {
      EXPECT_GE(info.opencl_version, (version{1, 2})) << info.name;
    }
  }
}

TEST(device_discovery, filters_narrow_the_selection) {
  actor_system sys{device_config(1)};
  auto all = sys.devices();
  if (all.empty()) GTEST_SKIP() << "no device of any backend here";
  for (const auto& d : all.of(backend::opencl)) EXPECT_EQ(d.backend(), backend::opencl);
  for (const auto& d : all.type(device_type::cpu)) EXPECT_EQ(d.info().type, device_type::cpu);
  EXPECT_TRUE(all.min_compute_capability({0, 0}).of(backend::opencl).empty());
  EXPECT_EQ(all.min_opencl_version({1, 0}).size(), all.of(backend::opencl).size());
  EXPECT_TRUE(all.min_opencl_version({99, 0}).empty());
  auto named = all.name_contains(all.front().name());
  ASSERT_FALSE(named.empty());
  EXPECT_EQ(named.front(), all.front());
}

TEST(device_discovery, an_empty_selection_says_which_filters_matched_nothing) {
  actor_system sys{device_config(1)};
  try {
    sys.devices().name_contains("no device is called this").type(device_type::gpu).front();
    FAIL() << "front() of an empty selection did not throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string{e.what()}.find("name contains 'no device is called this', type=gpu"),
              std::string::npos)
        << e.what();
  }
}

TEST(device_discovery, versions_compare_as_pairs) {
  EXPECT_GT((version{8, 0}), (version{7, 5}));
  EXPECT_LT((version{7, 5}), (version{7, 10}));
  EXPECT_EQ(to_string(version{8, 6}), "8.6");
}

TEST(device_discovery, systems_do_not_share_devices) {
  actor_system a{device_config(1)};
  actor_system b{device_config(1)};
  if (a.devices().empty()) GTEST_SKIP() << "no device of any backend here";
  EXPECT_FALSE(a.devices().front() == b.devices().front());
  EXPECT_EQ(a.devices().front().name(), b.devices().front().name());
}

}  // namespace
}  // namespace troupe::test

namespace troupe::test {
namespace {

TEST(nd_range_shape, braces_give_global_local_and_offset) {
  nd_range one{{256}, {64}};
  EXPECT_EQ(one.dimensions(), 1u);
  EXPECT_EQ(one.global()[0], 256u);
  EXPECT_EQ(one.local()[0], 64u);
  nd_range two{{100, 50}, {10, 5}, {1, 2}};
  EXPECT_EQ(two.dimensions(), 2u);
  EXPECT_EQ(two.global()[1], 50u);
  EXPECT_EQ(two.offset()[1], 2u);
  EXPECT_EQ(two.problem(), nullptr);
  EXPECT_NE(nd_range({100}, {30}).problem(), nullptr);
  EXPECT_NE(nd_range({100, 2}, {10}).problem(), nullptr);
  EXPECT_FALSE(nd_range{{8}}.has_local());
}

}  // namespace
}  // namespace troupe::test
