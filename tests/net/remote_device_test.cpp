// The devices of other nodes, used through the device and kernel APIs like local ones: every
// test runs on every node, and uses the devices of the next node (its node + 1, wrapping).

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "../device/device_fixture.hpp"
#include "troupe/device.hpp"
#include "troupe/kernel.hpp"
#include "troupe/net.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

/// An actor system of a node of the job, and the devices of the next node.
class remote_devices : public ::testing::Test {
 protected:
  remote_devices() : sys(device_config()) {
    self = sys.nodes().this_node();
    next = (self + 1) % sys.nodes().size();
    theirs = sys.devices().on_node(next).all();
    ours = sys.devices().local().all();
  }

  void SetUp() override {
    ASSERT_FALSE(ours.empty()) << "node " << self << " found no device of its own";
    ASSERT_FALSE(theirs.empty()) << "node " << self << " found no device of node " << next;
  }

  /// Throws unless `f` fails with `code` and a message holding each of `parts`.
  template <class Future>
  static void expect_failure(Future f, errc code, std::vector<std::string> parts) {
    try {
      f.get();
      ADD_FAILURE() << "expected a failure";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      for (const auto& part : parts)
        EXPECT_NE(std::string{e.what()}.find(part), std::string::npos)
            << "'" << part << "' missing from: " << e.what();
    }
  }

  std::string node_text(node_id node) const { return "node " + std::to_string(node); }

  actor_system sys;
  node_id self = 0;
  node_id next = 0;
  std::vector<device> theirs;
  std::vector<device> ours;
};

TEST_F(remote_devices, every_node_lists_the_devices_of_every_node) {
  const auto all = sys.devices();
  for (node_id node = 0; node < sys.nodes().size(); ++node)
    EXPECT_FALSE(all.on_node(node).empty()) << "no device of node " << node;
  for (const auto& d : ours) {
    EXPECT_TRUE(d.info().local);
    EXPECT_EQ(d.info().node, self);
  }
  for (const auto& d : theirs) {
    EXPECT_FALSE(d.info().local);
    EXPECT_EQ(d.info().node, next);
  }
  // Each node lists its own devices first, then the others' in node order.
  EXPECT_EQ(all.local().size(), ours.size());
  EXPECT_EQ(all[0].info().node, self);
}

TEST_F(remote_devices, buffer_commands_there_match_the_same_on_a_local_device) {
  const std::size_t n = 100000;  // more than a message's small-frame payload
  std::vector<int> source(n);
  std::iota(source.begin(), source.end(), -500);
  for (const auto& dev : theirs) {
    SCOPED_TRACE(dev.name());
    for (const auto& where : {dev, ours.front()}) {
      auto a = where.allocate<int>(n);
      auto b = where.allocate<int>(n);
      a.write(source).get();
      EXPECT_EQ(a.read().get(), source);
      // Part of it, at an offset.
      a.write(10, std::span<const int>{source.data(), 5}).get();
      auto part = a.read(8, 8).get();
      EXPECT_EQ(part, (std::vector<int>{source[8], source[9], source[0], source[1], source[2],
                                        source[3], source[4], source[15]}));
      b.fill(7).get();
      EXPECT_EQ(b.read().get(), std::vector<int>(n, 7));
      a.copy_to(b).get();
      std::vector<int> into(n);
      b.read_into(into).get();
      auto expected = source;
      std::copy(source.begin(), source.begin() + 5, expected.begin() + 10);
      EXPECT_EQ(into, expected);
      EXPECT_EQ(dev.state()->waits_on_workers(), 0u);
    }
  }
}

TEST_F(remote_devices, large_transfers_arrive_whole_in_order_and_in_place) {
  // Writes and reads of more than one landing block go as several commands; a copy on another
  // queue waits for all of a write's.
  const std::size_t n = (std::size_t{10} << 20) / sizeof(std::int32_t) + 3;  // 3 blocks, one short
  std::vector<std::int32_t> source(n);
  for (std::size_t i = 0; i < n; ++i) source[i] = static_cast<std::int32_t>(i * 2654435761u);
  for (const auto& dev : theirs) {
    SCOPED_TRACE(dev.name());
    auto a = dev.allocate<std::int32_t>(n);
    auto b = dev.allocate<std::int32_t>(n);
    auto other = dev.make_queue();
    auto written = a.write(source);
    other.copy(a, b, after(written)).get();
    EXPECT_EQ(b.read().get(), source);
    // A part that starts and ends inside blocks, read into pinned memory.
    const std::size_t from = (std::size_t{4} << 20) / sizeof(std::int32_t) - 7, count = n / 2;
    auto pinned = dev.allocate_host<std::int32_t>(count);
    other.read_into(b, from, pinned, 0, count).get();
    EXPECT_TRUE(std::equal(pinned.begin(), pinned.end(), source.begin() + from));
    // A write at an offset across a block boundary, and the whole read back.
    std::vector<std::int32_t> patch(count, -1);
    a.write(from, std::span<const std::int32_t>{patch}).get();
    auto expected = source;
    std::copy(patch.begin(), patch.end(), expected.begin() + from);
    std::vector<std::int32_t> into(n);
    a.read_into(into).get();
    EXPECT_EQ(into, expected);
  }
}

TEST_F(remote_devices, a_launch_there_after_commands_of_another_queue_matches_the_cpu) {
  const std::size_t n = 4096;
  std::vector<float> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 13);
    b[i] = static_cast<float>(i % 5) - 2;
  }
  for (const auto& dev : theirs) {
    SCOPED_TRACE(dev.name());
    auto prog = dev.compile(test_kernels().for_device(dev)).get();
    auto copies = dev.make_queue();
    auto x = dev.allocate<float>(n), y = dev.allocate<float>(n), z = dev.allocate<float>(n);
    auto wx = copies.write(x, std::span<const float>{a});
    auto wy = copies.write(y, std::span<const float>{b});
    auto added = dev.launch(prog, "add", nd_range{{n}}, after(wx, wy), x, y, z,
                            static_cast<std::uint32_t>(n));
    auto scaled = dev.launch(prog, "scale_add", nd_range{{n}}, after(added), z, 2.0f, 3,
                             static_cast<std::uint32_t>(n));
    auto out = z.read(after(scaled)).get();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], (a[i] + b[i]) * 2 + 3) << i;
  }
}

TEST_F(remote_devices, a_compile_error_there_names_the_node_and_carries_the_log) {
  for (const auto& dev : theirs) {
    const std::string broken = dev.backend() == backend::cuda
                                   ? "extern \"C\" __global__ void k(int* x) { x[0] = nope; }"
                                   : "__kernel void k(__global int* x) { x[0] = nope; }";
    expect_failure(dev.compile(broken), errc::compile_error, {node_text(next), "nope"});
  }
}

TEST_F(remote_devices, a_bad_launch_there_fails_its_future_naming_the_node_and_the_kernel) {
  for (const auto& dev : theirs) {
    auto prog = dev.compile(test_kernels().for_device(dev)).get();
    auto x = dev.allocate<int>(16);
    expect_failure(dev.launch(prog, "increment", nd_range{{16}}, x), errc::invalid_argument,
                   {node_text(next), "increment", "2 arguments"});
    expect_failure(dev.launch(prog, "no_such_kernel", nd_range{{16}}, x), errc::invalid_argument,
                   {node_text(next), "no_such_kernel"});
    // The queue goes on after a failure.
    x.fill(1).get();
    dev.launch(prog, "increment", nd_range{{16}}, x, std::uint32_t{16}).get();
    EXPECT_EQ(x.read().get(), std::vector<int>(16, 2));
  }
}

TEST_F(remote_devices, memory_the_device_cannot_hold_fails_its_commands_naming_node_and_size) {
  for (const auto& dev : theirs) {
    // More than the device has: refused at once, as a local device refuses it. (What fails
    // only there fails the first command that uses the memory, with that node's error.)
    const std::size_t too_many = dev.info().global_memory * 4;
    try {
      (void)dev.allocate<std::byte>(too_many);
      ADD_FAILURE() << "allocating " << too_many << " bytes on " << dev.name() << " succeeded";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::out_of_device_memory) << e.what();
      EXPECT_NE(std::string{e.what()}.find(node_text(next)), std::string::npos) << e.what();
      EXPECT_NE(std::string{e.what()}.find(std::to_string(too_many)), std::string::npos)
          << e.what();
    }
    // The device is still usable.
    auto small = dev.allocate<int>(4);
    small.fill(3).get();
    EXPECT_EQ(small.read().get(), std::vector<int>(4, 3));
  }
}

TEST_F(remote_devices, a_buffer_moves_between_devices_of_two_nodes) {
  const std::size_t n = 50000;
  std::vector<double> values(n);
  std::iota(values.begin(), values.end(), 0.5);
  auto there = theirs.front().allocate<double>(n);
  auto here = ours.front().allocate<double>(n);
  there.write(values).get();
  there.copy_to(here).get();
  EXPECT_EQ(here.read().get(), values);
  for (auto& v : values) v *= -1;
  here.write(values).get();
  here.copy_to(there).get();
  EXPECT_EQ(there.read().get(), values);
}

const kernel::source& scale_sources() {
  static const kernel::source sources{R"(
__kernel void scale(__global const float* x, __global float* y, float by) {
  size_t i = get_global_id(0);
  y[i] = x[i] * by;
})",
                                      R"(
extern "C" __global__ void scale(const float* x, float* y, float by) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] * by;
})",
                                      ""};
  return sources;
}

TEST_F(remote_devices, a_kernel_actor_pipeline_there_keeps_its_data_there) {
  const std::size_t n = 1024;
  const auto range = nd_range{{n}};
  for (const auto& dev : theirs) {
    SCOPED_TRACE(dev.name());
    auto first = sys.spawn_kernel(scale_sources(), "scale", range, on(dev), in<float, val>{},
                                  out<float, ref>{}, priv<float>{2.0f});
    auto middle = sys.spawn_kernel(scale_sources(), "scale", range, on(dev), in<float, ref>{},
                                   out<float, ref>{}, priv<float>{3.0f});
    auto last = sys.spawn_kernel(scale_sources(), "scale", range, on(dev), in<float, ref>{},
                                 out<float, val>{}, priv<float>{-1.0f});
    std::vector<float> x(n);
    std::iota(x.begin(), x.end(), 1.0f);
    auto y = request<std::vector<float>>(last * middle * first, x).get();
    ASSERT_EQ(y.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * -6.0f) << i;
  }
}

TEST_F(remote_devices, a_pipeline_across_two_nodes_moves_its_data_explicitly) {
  const std::size_t n = 2048;
  const auto range = nd_range{{n}};
  auto there = sys.spawn_kernel(scale_sources(), "scale", range, on(theirs.front()),
                                in<float, val>{}, out<float, ref>{}, priv<float>{4.0f});
  auto here = sys.spawn_kernel(scale_sources(), "scale", range, on(ours.front()), in<float, ref>{},
                               out<float, val>{}, priv<float>{0.5f});
  std::vector<float> x(n);
  std::iota(x.begin(), x.end(), -100.0f);
  auto on_their_device = request<mem_ref<float>>(there, x).get();
  EXPECT_EQ(on_their_device.device(), theirs.front());
  // Handed over as it is, the other device's data is refused; moved, it is taken.
  expect_failure(request<std::vector<float>>(here, on_their_device), errc::invalid_argument,
                 {theirs.front().name(), ours.front().name()});
  auto moved = on_their_device.copy_to(ours.front());
  auto y = request<std::vector<float>>(here, moved).get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 2.0f) << i;
}

TEST_F(remote_devices, requests_spread_over_the_devices_of_every_node) {
  const std::size_t n = 512;
  std::vector<device> everywhere;
  for (const auto& d : sys.devices()) everywhere.push_back(d);
  auto spread =
      sys.spawn_kernel(scale_sources(), "scale", nd_range{{n}}, on(everywhere, balance::throughput),
                       in<float, val>{}, out<float, val>{}, priv<float>{3.0f});
  std::vector<float> x(n, 2.0f);
  std::vector<future<std::vector<float>>> answers;
  for (int i = 0; i < 40; ++i) answers.push_back(request<std::vector<float>>(spread, x));
  for (auto& a : answers) EXPECT_EQ(a.get(), std::vector<float>(n, 6.0f));
}

}  // namespace
}  // namespace troupe::test
