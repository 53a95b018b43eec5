// The multi-threaded host copy that staged copies use, and its zeroing of fresh result memory
// (internal, so tested directly).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "device/host_copier.hpp"

namespace troupe::detail {
namespace {

std::vector<std::uint32_t> numbers(std::size_t count, std::uint32_t seed) {
  std::vector<std::uint32_t> out(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<std::uint32_t>(i * 2654435761u) ^ seed;
  return out;
}

TEST(host_copier, copies_small_and_large_ranges_exactly) {
  host_copier copier{3};
  for (std::size_t count : {0u, 1u, 1000u, 1u << 20, (5u << 20) + 7u}) {
    auto source = numbers(count, 17);
    std::vector<std::uint32_t> target(count + 2, 0xdeadbeef);
    copier.copy(target.data() + 1, source.data(), count * sizeof(std::uint32_t));
    EXPECT_EQ(target.front(), 0xdeadbeefu);
    EXPECT_EQ(target.back(), 0xdeadbeefu);
    EXPECT_TRUE(std::equal(source.begin(), source.end(), target.begin() + 1)) << count;
  }
}

TEST(host_copier, concurrent_callers_each_get_their_own_copy) {
  host_copier copier{2};
  std::vector<std::thread> callers;
  std::vector<int> right(4, 0);  // not vector<bool>: its bits share words across threads
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      bool all = true;
      for (int round = 0; round < 5; ++round) {
        auto source = numbers((3u << 20) + static_cast<unsigned>(c),
                              static_cast<std::uint32_t>(c * 100 + round));
        std::vector<std::uint32_t> target(source.size());
        copier.copy(target.data(), source.data(), source.size() * sizeof(std::uint32_t));
        all = all && target == source;
      }
      right[c] = all ? 1 : 0;
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < 4; ++c) EXPECT_EQ(right[c], 1) << c;
}

TEST(host_copier, zeroes_exactly_the_range_while_copies_run_beside) {
  host_copier copier{3};
  for (std::size_t count : {0u, 1u, 1000u, 1u << 20, (5u << 20) + 7u}) {
    std::vector<std::uint32_t> target(count + 2, 0xdeadbeef);
    auto source = numbers(3u << 20, 9);
    std::vector<std::uint32_t> copied(source.size());
    std::thread copying{
        [&] { copier.copy(copied.data(), source.data(), source.size() * sizeof(std::uint32_t)); }};
    copier.zero(target.data() + 1, count * sizeof(std::uint32_t));
    copying.join();
    EXPECT_EQ(target.front(), 0xdeadbeefu);
    EXPECT_EQ(target.back(), 0xdeadbeefu);
    EXPECT_TRUE(std::all_of(target.begin() + 1, target.end() - 1, [](auto x) { return x == 0; }))
        << count;
    EXPECT_EQ(copied, source);
  }
}

TEST(host_copier, works_without_helpers) {
  host_copier copier{0};
  auto source = numbers(3u << 20, 5);
  std::vector<std::uint32_t> target(source.size());
  copier.copy(target.data(), source.data(), source.size() * sizeof(std::uint32_t));
  EXPECT_EQ(target, source);
}

}  // namespace
}  // namespace troupe::detail
