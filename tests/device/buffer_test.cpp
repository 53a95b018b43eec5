#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <thread>

#include "device_fixture.hpp"
#include "troupe/async/promise.hpp"

namespace troupe::test {
namespace {

using buffer_test = device_test;

TEST_P(buffer_test, write_then_read_round_trips) {
  std::vector<int> data(1000);
  std::iota(data.begin(), data.end(), -500);
  auto buf = dev.allocate<int>(data.size());
  buf.write(data).get();
  EXPECT_EQ(buf.read().get(), data);
}

TEST_P(buffer_test, large_copies_round_trip) {
  // Large enough for copies that move in several pieces, with a short last one.
  std::vector<float> data(10'000'003);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 65521);
  auto buf = dev.allocate<float>(data.size());
  buf.write(data).get();
  EXPECT_TRUE(buf.read().get() == data);
  std::vector<float> back(data.size() - 5);
  buf.read_into(5, std::span<float>{back}).get();
  EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin() + 5));
}

TEST_P(buffer_test, large_reads_issued_later_arrive_whole) {
  // Large enough for fresh memory that the read prepares; the promise makes the command wait
  // on the host, so it is issued by the thread that sets it.
  std::vector<std::uint32_t> data(3'000'017);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint32_t>(i * 7 + 1);
  auto buf = dev.allocate<std::uint32_t>(data.size());
  buf.write(data).get();
  promise<void> go;
  auto waiting = buf.read(after(go.get_future()));
  auto at_once = buf.read();
  std::thread setter{[&] { go.set_value(); }};
  setter.join();
  EXPECT_TRUE(waiting.get() == data);
  EXPECT_TRUE(at_once.get() == data);
}

TEST_P(buffer_test, ranges_read_and_write_parts) {
  std::vector<float> zeros(100, 0.0f);
  auto buf = dev.allocate<float>(100);
  buf.write(zeros).get();
  std::vector<float> part{1.5f, 2.5f, 3.5f};
  buf.write(40, part).get();
  EXPECT_EQ(buf.read(39, 5).get(), (std::vector<float>{0.0f, 1.5f, 2.5f, 3.5f, 0.0f}));
  std::vector<float> into(3);
  buf.read_into(40, std::span<float>{into}).get();
  EXPECT_EQ(into, part);
}

TEST_P(buffer_test, fill_sets_every_element) {
  auto ints = dev.allocate<std::int32_t>(1001);
  ints.fill(7).get();
  EXPECT_EQ(ints.read().get(), std::vector<std::int32_t>(1001, 7));

  auto doubles = dev.allocate<double>(333);
  doubles.fill(2.25).get();
  EXPECT_EQ(doubles.read().get(), std::vector<double>(333, 2.25));

  struct quad {
    std::int32_t a, b, c, d;
    bool operator==(const quad&) const = default;
  };
  auto quads = dev.allocate<quad>(77);
  quads.fill(quad{1, -2, 3, -4}).get();
  EXPECT_EQ(quads.read().get(), std::vector<quad>(77, quad{1, -2, 3, -4}));

  auto bytes = dev.allocate<std::uint8_t>(4099);
  bytes.fill(0xAB).get();
  EXPECT_EQ(bytes.read().get(), std::vector<std::uint8_t>(4099, 0xAB));

  ints.fill(-1, 10, 5).get();
  auto after = ints.read(8, 9).get();
  EXPECT_EQ(after, (std::vector<std::int32_t>{7, 7, -1, -1, -1, -1, -1, 7, 7}));
}

TEST_P(buffer_test, copy_between_buffers_of_one_device) {
  std::vector<int> data(4096);
  std::iota(data.begin(), data.end(), 0);
  auto a = dev.allocate<int>(data.size());
  auto b = dev.allocate<int>(data.size());
  a.write(data).get();
  a.copy_to(b).get();
  EXPECT_EQ(b.read().get(), data);
  a.copy_to(100, b, 0, 10).get();
  EXPECT_EQ(b.read(0, 3).get(), (std::vector<int>{100, 101, 102}));
}

TEST_P(buffer_test, pinned_host_memory_round_trips) {
  auto host = dev.allocate_host<int>(10000);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int>(i * 3);
  auto buf = dev.allocate<int>(host.size());
  buf.write(host).get();
  auto back = dev.allocate_host<int>(host.size());
  buf.read_into(back).get();
  for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(back[i], static_cast<int>(i * 3));
}

TEST_P(buffer_test, queue_commands_with_pinned_ranges) {
  auto q = dev.make_queue();
  auto host = dev.allocate_host<float>(64);
  for (std::size_t i = 0; i < 64; ++i) host[i] = static_cast<float>(i);
  auto buf = dev.allocate<float>(32);
  q.write(buf, 0, host, 16, 32).get();
  auto out = dev.allocate_host<float>(64);
  q.read_into(buf, 0, out, 32, 32).get();
  for (std::size_t i = 0; i < 32; ++i) ASSERT_EQ(out[32 + i], static_cast<float>(16 + i));
}

TEST_P(buffer_test, empty_ranges_complete_at_once) {
  auto empty = dev.allocate<int>(0);
  EXPECT_EQ(empty.size(), 0u);
  empty.write(std::span<const int>{}).get();
  EXPECT_TRUE(empty.read().get().empty());
  auto buf = dev.allocate<int>(4);
  buf.write(4, std::span<const int>{}).get();
}

TEST_P(buffer_test, out_of_range_commands_fail_with_out_of_range) {
  auto buf = dev.allocate<int>(10);
  std::vector<int> five(5, 1);
  auto expect_range_error = [](auto&& f, const char* what) {
    try {
      std::forward<decltype(f)>(f).get();
      ADD_FAILURE() << what << " did not fail";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::out_of_range) << e.what();
      EXPECT_NE(std::string{e.what()}.find("outside the 10 elements"), std::string::npos)
          << e.what();
    }
  };
  expect_range_error(buf.write(8, five), "write past the end");
  expect_range_error(buf.read(6, 5), "read past the end");
  expect_range_error(buf.fill(1, 11, 0), "fill from past the end");
  auto small = dev.allocate<int>(3);
  try {
    buf.copy_to(small).get();
    ADD_FAILURE() << "copy into a smaller buffer did not fail";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::out_of_range);
    EXPECT_NE(std::string{e.what()}.find("(target)"), std::string::npos) << e.what();
  }
}

TEST_P(buffer_test, empty_handles_fail_with_no_state) {
  buffer<int> nothing;
  try {
    nothing.read().get();
    ADD_FAILURE() << "read of an empty handle did not fail";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::no_state);
    EXPECT_NE(std::string{e.what()}.find("buffer<int>::read"), std::string::npos) << e.what();
  }
}

TEST_P(buffer_test, allocating_more_than_the_device_has_fails_clearly) {
  auto too_much = dev.info().global_memory * 4;
  try {
    auto b = dev.allocate<std::byte>(too_much);
    // Some OpenCL drivers allocate lazily: then the first command fails instead.
    b.fill(std::byte{1}).get();
    ADD_FAILURE() << "allocating " << too_much << " bytes did not fail";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::out_of_device_memory) << e.what();
    EXPECT_NE(std::string{e.what()}.find(dev.name()), std::string::npos) << e.what();
  }
}

TEST_P(buffer_test, memory_given_back_is_handed_out_again_but_never_twice) {
  // Buffers of one size, freed and allocated again (a device keeps freed memory for reuse):
  // each live buffer has memory of its own, and holds what was written to it.
  const std::size_t n = 1 << 16;
  for (int round = 0; round < 8; ++round) {
    std::vector<buffer<int>> live;
    for (int i = 0; i < 3; ++i) {
      live.push_back(dev.allocate<int>(n));
      live.back().fill(round * 10 + i);
    }
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(live[i].read().get(), std::vector<int>(n, round * 10 + i)) << round << " " << i;
    }
  }
}

TEST_P(buffer_test, buffers_outlive_their_handles_while_commands_run) {
  std::vector<int> data(1 << 16, 5);
  future<std::vector<int>> pending;
  {
    auto buf = dev.allocate<int>(data.size());
    buf.write(data);
    pending = buf.read();
  }  // the handle is gone; the commands still hold the memory
  EXPECT_EQ(pending.get(), data);
}

TEST_P(buffer_test, commands_after_the_system_is_gone_fail_with_system_gone) {
  device kept;
  buffer<int> buf;
  {
    actor_system other{device_config()};
    auto index = std::stoul(GetParam().substr(0, GetParam().find('_')));
    kept = other.devices()[index];
    buf = kept.allocate<int>(16);
    buf.fill(3).get();
  }
  auto expect_gone = [](auto&& f) {
    try {
      std::forward<decltype(f)>(f).get();
      ADD_FAILURE() << "no error";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::system_gone) << e.what();
      EXPECT_NE(std::string{e.what()}.find("gone"), std::string::npos);
    }
  };
  expect_gone(buf.read());
  expect_gone(buf.fill(1));
  expect_gone(kept.compile(test_kernels().for_device(kept)));
  try {
    kept.allocate<int>(4);
    ADD_FAILURE() << "allocate after the system is gone did not throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::system_gone);
  }
}

INSTANTIATE_TEST_SUITE_P(devices, buffer_test, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(buffer_test);

}  // namespace
}  // namespace troupe::test
