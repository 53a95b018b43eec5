// The scan, stream-compaction and radix sort actors, against the same computed on the CPU, at
// sizes from one element to several levels of tiles.
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>

#include "kernel_fixture.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;
using u32 = std::uint32_t;

std::vector<u32> random_values(std::size_t n, u32 bound, unsigned seed) {
  std::mt19937 random(seed);  // 32-bit results
  std::vector<u32> values(n);
  for (auto& v : values) v = static_cast<u32>(bound == 0 ? random() : random() % bound);
  return values;
}

std::vector<u32> scan_on_cpu(const scan_options& options, const std::vector<u32>& data,
                             const std::vector<u32>& heads = {}) {
  auto op = [&](u32 a, u32 b) -> u32 {
    switch (options.op) {
      case scan_operator::sum:
        return a + b;
      case scan_operator::bit_or:
        return a | b;
      case scan_operator::max:
        return std::max(a, b);
    }
    return 0;
  };
  std::vector<u32> result(data.size());
  u32 running = 0;  // the identity of all three operators
  for (std::size_t i = 0; i < data.size(); ++i) {
    const u32 x = options.count_nonzero ? (data[i] != 0 ? 1 : 0) : data[i];
    if (!heads.empty() && heads[i] != 0) running = 0;
    if (options.inclusive) running = op(running, x);
    result[i] = running;
    if (!options.inclusive) running = op(running, x);
  }
  return result;
}

class kernel_primitives : public kernel_test {
 protected:
  mem_ref<u32> upload(const std::vector<u32>& values) {
    auto memory = dev.allocate<u32>(values.size());
    memory.write(std::span<const u32>{values}).get();
    return mem_ref<u32>{std::move(memory), values.size(), make_ready_future().share()};
  }

  std::vector<u32> scan_on_device(const scan_options& options, const std::vector<u32>& data,
                                  const std::vector<u32>& heads = {}) {
    auto scan = spawn_scan(sys, on(dev), options);
    auto result = options.segmented ? request<mem_ref<u32>>(scan, upload(data), upload(heads)).get()
                                    : request<mem_ref<u32>>(scan, upload(data)).get();
    EXPECT_EQ(result.size(), data.size());
    return result.read().get();
  }

  std::vector<std::vector<u32>> compact_on_device(const std::vector<std::vector<u32>>& data,
                                                  const std::vector<u32>& keep) {
    std::vector<mem_ref<u32>> columns;
    for (const auto& column : data) columns.push_back(upload(column));
    auto compaction = spawn_compaction(sys, on(dev));
    auto kept = request<std::vector<mem_ref<u32>>>(compaction, columns, upload(keep)).get();
    std::vector<std::vector<u32>> result;
    for (const auto& column : kept) {
      result.push_back(column.valid() ? column.read().get() : std::vector<u32>{});
    }
    return result;
  }
};

// 600000 elements are 293 tiles: the scan of the tile totals loops.
const std::size_t sizes[] = {1, 7, 255, 2048, 2049, 100000, 600000};

TEST_P(kernel_primitives, scans_match_the_cpu_at_every_size) {
  const scan_options all[] = {{scan_operator::sum, true, false, false},
                              {scan_operator::sum, false, false, false},
                              {scan_operator::bit_or, true, false, false},
                              {scan_operator::max, false, false, false},
                              {scan_operator::sum, true, true, false}};
  for (std::size_t n : sizes) {
    // Large values: sums wrap modulo 2^32 on both sides.
    const auto data = random_values(n, n % 2 == 0 ? 0 : 5, static_cast<unsigned>(n));
    for (const auto& options : all) {
      EXPECT_EQ(scan_on_device(options, data), scan_on_cpu(options, data))
          << "n=" << n << " op=" << static_cast<int>(options.op)
          << " inclusive=" << options.inclusive << " count_nonzero=" << options.count_nonzero;
    }
  }
}

TEST_P(kernel_primitives, a_segmented_scan_restarts_at_each_head) {
  for (std::size_t n : sizes) {
    const auto data = random_values(n, 1000, 1);
    for (u32 one_in : {1u, 3u, 50u, 100000u}) {
      auto heads = random_values(n, one_in, 2);
      for (auto& h : heads) h = h == 0 ? 7 : 0;  // any value but 0 is a head
      for (auto op : {scan_operator::sum, scan_operator::bit_or}) {
        const scan_options options{op, true, false, true};
        EXPECT_EQ(scan_on_device(options, data, heads), scan_on_cpu(options, data, heads))
            << "n=" << n << " heads one in " << one_in;
      }
    }
  }
}

TEST_P(kernel_primitives, scans_compose_on_the_device) {
  // The exclusive sum of the inclusive sum, with nothing read back in between.
  const auto data = random_values(70000, 100, 3);
  auto inclusive = spawn_scan(sys, on(dev), {scan_operator::sum, true, false, false});
  auto exclusive = spawn_scan(sys, on(dev), {scan_operator::sum, false, false, false});
  auto twice = request<mem_ref<u32>>(exclusive * inclusive, upload(data)).get();
  const auto expected = scan_on_cpu({scan_operator::sum, false, false, false},
                                    scan_on_cpu({scan_operator::sum, true, false, false}, data));
  EXPECT_EQ(twice.read().get(), expected);
}

TEST_P(kernel_primitives, scan_errors_name_the_problem) {
  auto scan = spawn_scan(sys, on(dev), {scan_operator::sum, true, false, true});
  const auto data = random_values(100, 10, 4);
  auto wrong = error_of(request<mem_ref<u32>>(scan, upload(data), upload({1, 0, 1})));
  EXPECT_NE(std::string{wrong.what()}.find("100 values but 3 heads"), std::string::npos)
      << wrong.what();
  auto empty = error_of(request<mem_ref<u32>>(scan, mem_ref<u32>{}, mem_ref<u32>{}));
  EXPECT_NE(std::string{empty.what()}.find("empty"), std::string::npos) << empty.what();
  auto plain = spawn_scan(sys, on(dev));
  auto type = error_of(request<mem_ref<u32>>(plain, std::vector<u32>{1, 2}));
  EXPECT_EQ(type.code(), errc::unexpected_message) << type.what();
  EXPECT_THROW(spawn_scan(sys, on(dev), {scan_operator::sum, false, false, true}), troupe::error);
}

TEST_P(kernel_primitives, compaction_keeps_flagged_elements_in_order) {
  for (std::size_t n : sizes) {
    const auto first = random_values(n, 0, 5), second = random_values(n, 0, 6);
    for (u32 one_in : {1u, 2u, 37u}) {
      const auto keep = random_values(n, one_in, 7);  // kept where not 0
      std::vector<u32> expected_first, expected_second;
      for (std::size_t i = 0; i < n; ++i) {
        if (keep[i] == 0) continue;
        expected_first.push_back(first[i]);
        expected_second.push_back(second[i]);
      }
      auto kept = compact_on_device({first, second}, keep);
      ASSERT_EQ(kept.size(), 2u);
      EXPECT_EQ(kept[0], expected_first) << "n=" << n << " one_in=" << one_in;
      EXPECT_EQ(kept[1], expected_second) << "n=" << n << " one_in=" << one_in;
    }
  }
}

TEST_P(kernel_primitives, compaction_of_nothing_and_of_everything) {
  const auto data = random_values(5000, 0, 8);
  auto none = compact_on_device({data}, std::vector<u32>(data.size(), 0));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].empty());
  auto all = compact_on_device({data}, std::vector<u32>(data.size(), 1));
  EXPECT_EQ(all.at(0), data);
}

TEST_P(kernel_primitives, compaction_errors_name_the_problem) {
  auto compaction = spawn_compaction(sys, on(dev));
  auto keep = upload(std::vector<u32>(10, 1));
  auto ask = [&](std::vector<mem_ref<u32>> columns, mem_ref<u32> flags) {
    return std::string{
        error_of(request<std::vector<mem_ref<u32>>>(compaction, std::move(columns), flags)).what()};
  };
  EXPECT_NE(
      ask({upload(std::vector<u32>(9, 1))}, keep).find("column 0 has 9 elements, keep has 10"),
      std::string::npos);
  EXPECT_NE(ask({}, keep).find("no columns"), std::string::npos);
  EXPECT_NE(ask({keep}, {}).find("keep mem_ref is empty"), std::string::npos);
  EXPECT_NE(ask({keep, {}}, keep).find("column 1 is an empty mem_ref"), std::string::npos);
}

TEST_P(kernel_primitives, radix_sort_orders_by_key_and_keeps_equal_keys_in_order) {
  auto sort = spawn_radix_sort(sys, on(dev));
  for (std::size_t n : sizes) {
    // One key; 3 bits (one pass); 20 bits; all 32 bits (8 passes).
    for (u32 bound : {1u, 8u, 1u << 20, 0u}) {
      const auto keys = random_values(n, bound, static_cast<unsigned>(n) + bound);
      std::vector<u32> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<u32>(i);  // original positions
      std::vector<std::pair<u32, u32>> expected(n);
      for (std::size_t i = 0; i < n; ++i) expected[i] = {keys[i], values[i]};
      std::stable_sort(expected.begin(), expected.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      auto sorted = request<message>(sort, upload(keys), upload(values)).get();
      ASSERT_TRUE((sorted.match<mem_ref<u32>, mem_ref<u32>>()));
      const auto got_keys = sorted.get_as<mem_ref<u32>>(0).read().get();
      const auto got_values = sorted.get_as<mem_ref<u32>>(1).read().get();
      ASSERT_EQ(got_keys.size(), n);
      ASSERT_EQ(got_values.size(), n);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        wrong += got_keys[i] != expected[i].first || got_values[i] != expected[i].second;
      }
      EXPECT_EQ(wrong, 0u) << "n=" << n << " bound=" << bound;
    }
  }
}

TEST_P(kernel_primitives, radix_sort_errors_name_the_problem) {
  auto sort = spawn_radix_sort(sys, on(dev));
  auto ask = [&](mem_ref<u32> keys, mem_ref<u32> values) {
    return std::string{error_of(request<message>(sort, std::move(keys), std::move(values))).what()};
  };
  const auto ten = upload(std::vector<u32>(10, 1));
  EXPECT_NE(ask(ten, upload(std::vector<u32>(9, 1))).find("10 keys but 9 values"),
            std::string::npos);
  EXPECT_NE(ask({}, ten).find("keys mem_ref is empty"), std::string::npos);
  EXPECT_NE(ask(ten, {}).find("values mem_ref is empty"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(devices, kernel_primitives, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(kernel_primitives);

}  // namespace
}  // namespace troupe::test
