// Kernel actors on pinned host memory: host_buffer inputs written by DMA from where they lie,
// outputs read into page-locked blocks that the actor takes again once released. Each result is
// checked against the same computation on the CPU.
#include <algorithm>
#include <numeric>
#include <string>
#include <typeinfo>
#include <vector>

#include "kernel_fixture.hpp"
#include "troupe/kernel/detail/pinned_block_pool.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

class kernel_pinned : public kernel_test {
 protected:
  template <class T>
  host_buffer<T> pinned_iota(std::size_t n, T first) {
    auto values = dev.allocate_host<T>(n);
    std::iota(values.begin(), values.end(), first);
    return values;
  }
  static bool mentions(const troupe::error& e, const std::string& text) {
    return std::string{e.what()}.find(text) != std::string::npos;
  }
};

TEST_P(kernel_pinned, pinned_inputs_and_output_match_the_cpu) {
  const std::size_t n = 1000;
  auto add = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev),
                              in<float, pinned>{}, in<float, pinned>{}, out<float, pinned>{});
  auto a = pinned_iota<float>(n, 1), b = pinned_iota<float>(n, -0.5f);
  auto c = request<host_buffer<float>>(add, a, b).get();
  ASSERT_EQ(c.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  // The inputs are the sender's still, unchanged.
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 1.0f + static_cast<float>(i)) << i;
}

TEST_P(kernel_pinned, pinned_positions_mix_with_vectors_and_mem_refs) {
  const std::size_t n = 512;
  auto add = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev),
                              in<float, pinned>{}, in<float>{}, out<float>{});
  auto a = pinned_iota<float>(n, 3);
  std::vector<float> b(n, 0.25f);
  auto c = request<std::vector<float>>(add, a, b).get();
  ASSERT_EQ(c.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + 0.25f) << i;

  auto spawn = [&](auto tag, int by) {
    return sys.spawn_kernel(kernel_test_sources(), "increment", nd_range{{n}}, on(dev), tag,
                            priv<int>{by});
  };
  auto start = pinned_iota<int>(n, 10);
  auto expect = [&](const auto& got, int added) {
    ASSERT_EQ(got.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], start[i] + added) << i;
  };
  auto pinned_pinned = request<host_buffer<int>>(spawn(in_out<int, pinned, pinned>{}, 1), start);
  expect(pinned_pinned.get(), 1);
  expect(request<std::vector<int>>(spawn(in_out<int, pinned, val>{}, 2), start).get(), 2);
  auto on_device = request<mem_ref<int>>(spawn(in_out<int, pinned, ref>{}, 3), start).get();
  expect(on_device.read().get(), 3);
  auto back = request<host_buffer<int>>(spawn(in_out<int, ref, pinned>{}, 4), on_device).get();
  expect(back, 7);
  std::vector<int> values(start.begin(), start.end());
  expect(request<host_buffer<int>>(spawn(in_out<int, val, pinned>{}, 5), values).get(), 5);
}

TEST_P(kernel_pinned, a_held_output_is_never_overwritten_and_a_released_one_is_reused) {
  const std::size_t n = 4096;
  auto scale = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev),
                                in<float, pinned>{}, out<float, pinned>{}, priv<float>{2.0f});
  auto x = pinned_iota<float>(n, 0);
  auto first = request<host_buffer<float>>(scale, x).get();
  std::vector<host_buffer<float>> held;
  for (int round = 1; round <= 10; ++round) {
    // x may change once the response is there: the write has read it.
    std::iota(x.begin(), x.end(), static_cast<float>(100 * round));
    held.push_back(request<host_buffer<float>>(scale, x).get());
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(first[i], 2.0f * static_cast<float>(i)) << i;
  for (std::size_t r = 0; r < held.size(); ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(held[r][i], 2.0f * static_cast<float>(100 * (r + 1) + i)) << r << ' ' << i;
    }
  }
  // Once every handle is gone the block comes back; the response message that carried it may
  // be freed a moment after the answer arrives, so allow a few requests.
  const float* first_block = first.data();
  first = {};
  held.clear();
  bool reused = false;
  for (int attempt = 0; attempt < 100 && !reused; ++attempt) {
    auto again = request<host_buffer<float>>(scale, x).get();
    reused = again.data() == first_block;
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(again[i], 2.0f * x[i]) << i;
  }
  EXPECT_TRUE(reused) << "the first output's block never came back";
}

TEST_P(kernel_pinned, a_pinned_input_may_be_reused_once_a_device_only_answer_has_come) {
  // The answer is a mem_ref, there before the kernel runs: it waits for the input's write.
  const std::size_t n = std::size_t{4} << 20;
  auto scale = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev),
                                in<float, pinned>{}, out<float, ref>{}, priv<float>{3.0f});
  auto increment = sys.spawn_kernel(kernel_test_sources(), "increment", nd_range{{n}}, on(dev),
                                    in_out<int, pinned, ref>{}, priv<int>{5});
  for (int round = 0; round < 3; ++round) {
    auto x = pinned_iota<float>(n, static_cast<float>(round));
    auto y = request<mem_ref<float>>(scale, x).get();
    std::fill(x.begin(), x.end(), -1.0f);
    auto values = pinned_iota<int>(n, round);
    auto z = request<mem_ref<int>>(increment, values).get();
    std::fill(values.begin(), values.end(), -1);
    auto scaled = y.read().get();
    auto incremented = z.read().get();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(scaled[i], 3.0f * (static_cast<float>(round) + static_cast<float>(i))) << i;
      ASSERT_EQ(incremented[i], round + static_cast<int>(i) + 5) << i;
    }
  }
}

TEST_P(kernel_pinned, the_block_pool_takes_the_smallest_free_block_and_keeps_its_capacity) {
  kernel::detail::pinned_block_pool pool{2, 1 << 20};
  auto a = pool.take(dev, 1000);
  auto b = pool.take(dev, 4000);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(pool.kept(), 2u);
  // Both held: a fresh block, not kept.
  auto c = pool.take(dev, 100);
  EXPECT_NE(c.get(), a.get());
  EXPECT_NE(c.get(), b.get());
  EXPECT_EQ(pool.kept(), 2u);
  const auto* first = a.get();
  const auto* second = b.get();
  a = nullptr;
  b = nullptr;
  EXPECT_EQ(pool.take(dev, 500).get(), first);    // the smallest that fits
  EXPECT_EQ(pool.take(dev, 2000).get(), second);  // the only one that fits
  // Neither fits: a fresh block takes the place of a free one too small.
  auto large = pool.take(dev, 8000);
  EXPECT_GE(large->bytes(), 8000u);
  EXPECT_EQ(pool.kept(), 2u);
  const auto* large_block = large.get();
  large = nullptr;
  EXPECT_EQ(pool.take(dev, 8000).get(), large_block);
}

TEST_P(kernel_pinned, the_block_pool_keeps_no_more_bytes_than_its_byte_capacity) {
  kernel::detail::pinned_block_pool pool{8, 10000};
  auto a = pool.take(dev, 6000);
  auto b = pool.take(dev, 6000);  // over 10000 bytes in all: not kept
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_EQ(pool.kept_bytes(), 6000u);
  const auto* kept_block = a.get();
  b = nullptr;
  a = nullptr;
  EXPECT_EQ(pool.take(dev, 6000).get(), kept_block);
  // One block is kept however large: a single output of any size is taken again.
  auto huge = pool.take(dev, 50000);
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_EQ(pool.kept_bytes(), 50000u);
  const auto* huge_block = huge.get();
  huge = nullptr;
  EXPECT_EQ(pool.take(dev, 50000).get(), huge_block);
}

TEST_P(kernel_pinned, bad_pinned_inputs_fail_with_errors_that_name_them) {
  const std::size_t n = 8;
  auto add = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev),
                              in<float, pinned>{size_rule{}}, in<float, pinned>{size_rule{}},
                              out<float, pinned>{});
  auto unchecked = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev),
                                    in<float, pinned>{}, in<float, pinned>{}, out<float, pinned>{});
  auto empty = error_of(
      request<host_buffer<float>>(unchecked, host_buffer<float>{}, dev.allocate_host<float>(n)));
  EXPECT_EQ(empty.code(), errc::invalid_argument);
  EXPECT_TRUE(mentions(empty, "argument 0 (in<float, pinned>): the host_buffer is empty"))
      << empty.what();
  auto short_one = error_of(
      request<host_buffer<float>>(add, dev.allocate_host<float>(n), dev.allocate_host<float>(7)));
  EXPECT_TRUE(mentions(short_one, "argument 1 (in<float, pinned>): it has 7 elements, expected 8"))
      << short_one.what();
  // A vector where pinned memory is expected is a message of another type.
  auto vector = error_of(
      request<host_buffer<float>>(add, std::vector<float>(n, 1), std::vector<float>(n, 2)));
  EXPECT_EQ(vector.code(), errc::unexpected_message);
  // Still serving.
  auto a = pinned_iota<float>(n, 1), b = pinned_iota<float>(n, 2);
  auto c = request<host_buffer<float>>(add, a, b).get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(kernel_pinned, a_request_with_pinned_memory_cannot_cross_nodes) {
  // Page-locked memory belongs to this process: sending a request of it to another node fails
  // there with an error that names host_buffer (see net_test for how such an error arrives).
  const auto& codec = *troupe::detail::type_list_of<host_buffer<float>, host_buffer<float>>.codec();
  ASSERT_NE(codec.unencodable, nullptr);
  EXPECT_EQ(codec.unencodable, &typeid(host_buffer<float>));
  EXPECT_NE(troupe::detail::type_name(*codec.unencodable).find("host_buffer"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(devices, kernel_pinned, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(kernel_pinned);

}  // namespace
}  // namespace troupe::test
