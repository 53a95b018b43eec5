// The WAH index: the host reference against a closed form and against decoding, the parallel
// host build against the reference, and the device pipeline bit for bit against the reference.
#include <map>
#include <random>
#include <span>
#include <thread>

#include "kernel/kernel_fixture.hpp"
#include "wah_pipeline.hpp"

namespace troupe::test {
namespace {

using wah::u32;

std::vector<u32> random_column(std::size_t n, u32 cardinality, unsigned seed) {
  std::mt19937 random(seed);  // 32-bit results
  std::vector<u32> column(n);
  for (auto& v : column) v = static_cast<u32>(cardinality == 0 ? random() : random() % cardinality);
  return column;
}

TEST(wah_reference, a_bitmap_by_hand) {
  // Value 5 at rows 0, 40 and 100: chunk 0 bit 0, chunk 1 bit 9, then one empty chunk, then
  // chunk 3 bit 7. Value 2 at rows 1 to 39 (a full chunk 0, then bits 0-8 of chunk 1) and 70
  // (chunk 2 bit 8). Other rows hold 9.
  std::vector<u32> column(101, 9);
  column[0] = column[40] = column[100] = 5;
  for (u32 r = 1; r < 40; ++r) column[r] = 2;
  column[70] = 2;
  const auto index = wah::build_on_cpu(column);
  EXPECT_EQ(index.values, (std::vector<u32>{2, 5, 9}));
  const std::vector<u32> two{0x7ffffffeu, 0x1ffu, 1u << 8};
  const std::vector<u32> five{1u, 1u << 9, wah::fill_bit | 1u, 1u << 7};
  std::vector<u32> words = two;
  words.insert(words.end(), five.begin(), five.end());
  ASSERT_EQ(index.offsets, (std::vector<u32>{0, 3, 7, static_cast<u32>(index.words.size())}));
  EXPECT_EQ(std::vector<u32>(index.words.begin(), index.words.begin() + 7), words);
}

TEST(wah_reference, decoding_gives_back_every_row) {
  for (u32 cardinality : {1u, 3u, 1000u, 0u}) {
    const auto column = random_column(20000, cardinality, cardinality);
    const auto index = wah::build_on_cpu(column);
    std::map<u32, std::vector<u32>> rows;
    for (u32 r = 0; r < column.size(); ++r) rows[column[r]].push_back(r);
    ASSERT_EQ(index.values.size(), rows.size());
    for (const auto& [value, expected] : rows) {
      EXPECT_EQ(wah::rows_of(index, value), expected) << "value " << value;
    }
    EXPECT_TRUE(wah::rows_of(index, 1000).empty() || rows.count(1000));
  }
}

TEST(wah_reference, every_thread_count_builds_the_same_index) {
  for (std::size_t n : {1, 31, 32, 5000, 300001}) {
    for (u32 cardinality : {1u, 2u, 100u, 0u}) {
      const auto column = random_column(n, cardinality, static_cast<unsigned>(n));
      const auto reference = wah::build_on_cpu(column, 1);
      for (unsigned threads : {2u, 3u, 8u}) {
        EXPECT_EQ(wah::first_difference(reference, wah::build_on_cpu(column, threads)), "")
            << "n=" << n << " cardinality=" << cardinality << " threads=" << threads;
      }
    }
  }
}

TEST(wah_reference, bad_columns_are_refused) {
  EXPECT_THROW(wah::build_on_cpu(std::vector<u32>{}), std::invalid_argument);
}

class wah_device : public kernel_test {};

TEST_P(wah_device, the_device_index_is_bit_identical_to_the_reference) {
  wah::device_builder builder(sys, dev);
  for (std::size_t n : {1, 31, 1000, 70001, 300000}) {
    // Cardinality 0: values over all 32 bits (8 sort passes); 1: one pass, one value.
    for (u32 cardinality : {1u, 5u, 4096u, 0u}) {
      const auto column = random_column(n, cardinality, static_cast<unsigned>(n + cardinality));
      const auto built = builder.build(column).get();
      EXPECT_EQ(wah::first_difference(wah::build_on_cpu(column), built), "")
          << "n=" << n << " cardinality=" << cardinality;
    }
  }
}

TEST_P(wah_device, the_pipeline_answers_with_device_memory) {
  wah::device_builder builder(sys, dev);
  const auto column = random_column(5000, 10, 1);
  auto built = request<message>(builder.pipeline(), column).get();
  ASSERT_TRUE((built.match<kernel::mem_ref<u32>, kernel::mem_ref<u32>, kernel::mem_ref<u32>>()));
  const auto reference = wah::build_on_cpu(column);
  EXPECT_EQ(built.get_as<kernel::mem_ref<u32>>(0).size(), reference.words.size());
  EXPECT_EQ(built.get_as<kernel::mem_ref<u32>>(1).size(), reference.values.size());
  EXPECT_TRUE(built.get_as<kernel::mem_ref<u32>>(0).device() == dev);
}

TEST_P(wah_device, a_column_on_the_device_gives_the_same_index) {
  wah::device_builder builder(sys, dev);
  const auto column = random_column(40000, 300, 2);
  auto memory = dev.allocate<u32>(column.size());
  memory.write(std::span<const u32>{column}).get();
  kernel::mem_ref<u32> on_device{memory, column.size(), make_ready_future().share()};
  auto built = request<message>(builder.resident_pipeline(), on_device).get();
  wah::wah_index index{built.get_as<kernel::mem_ref<u32>>(1).read().get(),
                       built.get_as<kernel::mem_ref<u32>>(2).read().get(),
                       built.get_as<kernel::mem_ref<u32>>(0).read().get()};
  EXPECT_EQ(wah::first_difference(wah::build_on_cpu(column), index), "");
}

TEST_P(wah_device, builds_run_concurrently) {
  wah::device_builder builder(sys, dev);
  std::vector<std::vector<u32>> columns;
  std::vector<future<wah::wah_index>> built;
  for (unsigned i = 0; i < 6; ++i) {
    columns.push_back(random_column(20000 + i * 1000, 50 + i, i));
    built.push_back(builder.build(columns.back()));
  }
  for (unsigned i = 0; i < built.size(); ++i) {
    EXPECT_EQ(wah::first_difference(wah::build_on_cpu(columns[i]), built[i].get()), "") << i;
  }
}

TEST_P(wah_device, bad_input_gets_an_error_response) {
  wah::device_builder builder(sys, dev);
  auto empty = error_of(builder.build({}));
  EXPECT_NE(std::string{empty.what()}.find("the column is empty"), std::string::npos)
      << empty.what();
  auto wrong = error_of(request<message>(builder.pipeline(), std::vector<float>{1.0f}));
  EXPECT_EQ(wrong.code(), errc::unexpected_message) << wrong.what();
}

INSTANTIATE_TEST_SUITE_P(devices, wah_device, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(wah_device);

}  // namespace
}  // namespace troupe::test
