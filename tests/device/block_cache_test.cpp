// The cache that keeps device memory and staging blocks for reuse (internal, so tested directly).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "device/block_cache.hpp"

namespace troupe::detail {
namespace {

// Blocks are ints: the tests see which ones are released, and in what order.
struct released_log {
  std::vector<int> blocks;
  auto release() {
    return [this](int block) { blocks.push_back(block); };
  }
};

TEST(block_cache, hands_out_a_kept_block_of_the_same_size_newest_first) {
  block_cache<int> cache{1000, 1000};
  released_log released;
  EXPECT_FALSE(cache.take(100).has_value());
  cache.keep(100, 1, released.release());
  cache.keep(100, 2, released.release());
  cache.keep(200, 3, released.release());
  EXPECT_FALSE(cache.take(150).has_value());  // sizes match exactly, never "at least"
  EXPECT_EQ(cache.take(100), 2);
  EXPECT_EQ(cache.take(100), 1);
  EXPECT_FALSE(cache.take(100).has_value());  // never handed out twice
  EXPECT_EQ(cache.take(200), 3);
  EXPECT_TRUE(released.blocks.empty());
}

TEST(block_cache, over_the_limit_the_least_recently_kept_go_first) {
  block_cache<int> cache{300, 300};
  released_log released;
  cache.keep(100, 1, released.release());
  cache.keep(200, 2, released.release());
  cache.keep(100, 3, released.release());  // 400 bytes: block 1, the oldest, goes
  EXPECT_EQ(released.blocks, (std::vector<int>{1}));
  cache.keep(200, 4, released.release());  // 500: 2 goes (300 left)
  EXPECT_EQ(released.blocks, (std::vector<int>{1, 2}));
  EXPECT_EQ(cache.take(100), 3);
  EXPECT_EQ(cache.take(200), 4);
  EXPECT_FALSE(cache.take(100).has_value());
}

TEST(block_cache, releases_blocks_larger_than_it_keeps_at_once) {
  block_cache<int> cache{1000, 250};
  released_log released;
  cache.keep(300, 7, released.release());
  EXPECT_EQ(released.blocks, (std::vector<int>{7}));
  EXPECT_FALSE(cache.take(300).has_value());
}

TEST(block_cache, release_all_releases_every_block_oldest_first) {
  block_cache<int> cache{1000, 1000};
  released_log released;
  for (int block = 0; block < 5; ++block) cache.keep(100 + block % 2, block, released.release());
  cache.release_all(released.release());
  EXPECT_EQ(released.blocks, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(cache.take(100).has_value());
  EXPECT_FALSE(cache.take(101).has_value());
}

TEST(block_cache, concurrent_keepers_and_takers_never_share_a_block) {
  block_cache<int> cache{1 << 20, 1 << 20};
  constexpr int per_thread = 2000;
  std::vector<std::vector<int>> taken(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        cache.keep(64, t * per_thread + i,
                   [](int) { ADD_FAILURE() << "nothing is over the limit"; });
        if (const auto block = cache.take(64)) taken[static_cast<std::size_t>(t)].push_back(*block);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<int> all;
  for (const auto& blocks : taken) all.insert(all.end(), blocks.begin(), blocks.end());
  while (const auto block = cache.take(64)) all.push_back(*block);
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), std::size_t{4 * per_thread});
  for (int i = 0; i < 4 * per_thread; ++i) EXPECT_EQ(all[static_cast<std::size_t>(i)], i);
}

}  // namespace
}  // namespace troupe::detail
