// The multi-threaded host copy that staged copies use, its zeroing of fresh result memory, and
// the copy out of a staging block that follows a result's preparation (internal, so tested
// directly).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "device/host_copier.hpp"
#include "troupe/async/future.hpp"

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

TEST(host_copier, copies_only_what_its_gate_has_opened) {
  host_copier copier{3};
  const std::size_t count = (5u << 20) + 7u;  // two whole pieces and a short one
  const std::size_t bytes = count * sizeof(std::uint32_t);
  auto source = numbers(count, 23);
  std::vector<std::uint32_t> target(count + 1, 0xdeadbeef);
  destination_gate gate;
  // From the second element on, so that a copy that does not start at 0 is checked too.
  std::thread copying{[&] {
    copier.copy_when_ready(target.data(), source.data(), sizeof(std::uint32_t), bytes, &gate);
  }};
  // The gate opens a quarter piece at a time; before each step, nothing beyond it was written.
  int written_ahead = 0;
  for (std::size_t open = 0; open < bytes;) {
    // Time passes on purpose: a copier that wrongly ran ahead of the gate would do so now.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!std::all_of(target.begin() + static_cast<std::ptrdiff_t>(open / sizeof(std::uint32_t)),
                     target.end(), [](auto x) { return x == 0xdeadbeef; }))
      ++written_ahead;
    open = std::min(bytes, open + destination_gate::piece / 4);
    gate.open_up_to(open);
  }
  copying.join();
  EXPECT_EQ(written_ahead, 0);
  EXPECT_EQ(target.front(), 0xdeadbeefu);
  EXPECT_EQ(target.back(), 0xdeadbeefu);
  EXPECT_TRUE(std::equal(source.begin() + 1, source.end(), target.begin() + 1));
}

TEST(host_copier, a_copy_out_follows_a_result_prepared_beside_it) {
  // As a large staged read: the submitting thread prepares the vector (zeroes it) while the
  // completion thread copies the data in; no zero may land on copied data.
  host_copier copier{3};
  fresh_memory fresh;
  const std::size_t count = (5u << 20) + 7u;
  auto source = numbers(count, 31);
  intrusive_ptr<vector_result<std::uint32_t>> result{
      new vector_result<std::uint32_t>({}, count, /*prepare_later=*/true, fresh), adopt_ref};
  ASSERT_TRUE(result->gate());
  EXPECT_EQ(result->gate()->ready(), 0u);
  auto got = future_access::make<future<std::vector<std::uint32_t>>>(result->shared());
  std::thread copying{[&] {
    copier.copy_when_ready(result->data(), source.data(), 0, count * sizeof(std::uint32_t),
                           result->gate().get());
    result->complete();
  }};
  result->prepare();
  copying.join();
  EXPECT_TRUE(std::move(got).get() == source);
}

TEST(host_copier, results_ready_at_once_have_no_gate) {
  // A small result is never left for later, even when asked; a large one only when asked.
  const struct {
    std::size_t count;
    bool prepare_later;
  } cases[] = {{1000, true},
               {fresh_check_threshold / sizeof(std::uint32_t) + 1, true},
               {fresh_memory_threshold / sizeof(std::uint32_t) + 1, false}};
  fresh_memory fresh;
  for (const auto& c : cases) {
    intrusive_ptr<vector_result<std::uint32_t>> result{
        new vector_result<std::uint32_t>({}, c.count, c.prepare_later, fresh), adopt_ref};
    EXPECT_FALSE(result->gate()) << c.count;
    result->prepare();  // nothing left to do
    auto got = future_access::make<future<std::vector<std::uint32_t>>>(result->shared());
    result->complete();
    EXPECT_EQ(std::move(got).get(), std::vector<std::uint32_t>(c.count, 0)) << c.count;
  }
}

TEST(fresh_memory, zeroes_exactly_the_range_also_once_closed) {
  // Closed with its system, it still prepares what a read submitted later gives it, alone.
  fresh_memory fresh;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::uint32_t> memory((9u << 20) / sizeof(std::uint32_t) + 2, 0xdeadbeef);
    fresh.prepare(memory.data() + 1, (memory.size() - 2) * sizeof(std::uint32_t));
    EXPECT_EQ(memory.front(), 0xdeadbeefu) << round;
    EXPECT_EQ(memory.back(), 0xdeadbeefu) << round;
    EXPECT_TRUE(std::all_of(memory.begin() + 1, memory.end() - 1, [](auto x) { return x == 0; }))
        << round;
    fresh.close();
  }
}

#ifdef __linux__
TEST(fresh_memory, pages_not_resident_are_fresh) {
  // 8 MiB, written in its first page only: even where that page becomes a 2 MiB huge page, most
  // of it is not resident.
  constexpr std::size_t bytes = std::size_t{8} << 20;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* data = static_cast<unsigned char*>(memory);
  EXPECT_TRUE(is_mostly_fresh(data, bytes));
  data[0] = 1;
  EXPECT_TRUE(is_mostly_fresh(data, bytes));
  std::memset(data, 1, bytes);
  EXPECT_FALSE(is_mostly_fresh(data, bytes));
  EXPECT_FALSE(is_mostly_fresh(data + 100, bytes - 200));  // not page-aligned
  ASSERT_EQ(madvise(data, bytes, MADV_DONTNEED), 0);       // given back to the kernel
  EXPECT_TRUE(is_mostly_fresh(data, bytes));
  munmap(memory, bytes);
}
#endif

}  // namespace
}  // namespace troupe::detail
