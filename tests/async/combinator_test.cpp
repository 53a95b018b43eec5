// when_all, when_any, dataflow: results in order, errors kept per input, large fan-in.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "troupe/async.hpp"

namespace {

TEST(when_all, variadic_holds_ready_inputs_in_order) {
  troupe::promise<int> a;
  troupe::promise<std::string> b;
  auto all = troupe::when_all(a.get_future(), b.get_future(), troupe::make_ready_future());
  EXPECT_FALSE(all.is_ready());
  b.set_value("two");
  EXPECT_FALSE(all.is_ready());
  a.set_value(1);
  auto [fa, fb, fc] = all.get();
  EXPECT_EQ(fa.get(), 1);
  EXPECT_EQ(fb.get(), "two");
  fc.get();
}

TEST(when_all, vector_keeps_each_error_with_its_input) {
  std::vector<troupe::future<int>> inputs;
  inputs.push_back(troupe::make_ready_future(1));
  inputs.push_back(troupe::make_exceptional_future<int>(std::runtime_error{"second"}));
  inputs.push_back(troupe::make_ready_future(3));
  auto results = troupe::when_all(std::move(inputs)).get();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].get(), 1);
  EXPECT_THROW(results[1].get(), std::runtime_error);
  EXPECT_EQ(results[2].get(), 3);
}

TEST(when_all, empty_input_is_ready) {
  EXPECT_TRUE(troupe::when_all(std::vector<troupe::future<int>>{}).get().empty());
}

TEST(when_all, rejects_an_input_without_state) {
  std::vector<troupe::future<int>> inputs(1);
  EXPECT_THROW(troupe::when_all(std::move(inputs)), troupe::error);
}

TEST(when_all, iterator_range_and_shared_futures) {
  std::vector<troupe::shared_future<int>> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(troupe::make_ready_future(i).share());
  auto results = troupe::when_all(inputs.begin(), inputs.end()).get();
  int sum = 0;
  for (auto& f : results) sum += f.get();
  EXPECT_EQ(sum, 10);
}

TEST(when_any, reports_the_first_ready_input) {
  troupe::promise<int> slow;
  troupe::promise<int> fast;
  std::vector<troupe::future<int>> inputs;
  inputs.push_back(slow.get_future());
  inputs.push_back(fast.get_future());
  auto any = troupe::when_any(std::move(inputs));
  fast.set_value(2);
  auto result = any.get();
  EXPECT_EQ(result.index, 1u);
  EXPECT_EQ(result.futures[1].get(), 2);
  EXPECT_FALSE(result.futures[0].is_ready());
  slow.set_value(1);  // completes after the decision; must not disturb anything
  EXPECT_EQ(result.futures[0].get(), 1);
}

TEST(when_any, variadic_and_empty) {
  auto any =
      troupe::when_any(troupe::make_ready_future(std::string{"x"}), troupe::make_ready_future(2));
  EXPECT_EQ(any.get().index, 0u);
  auto none = troupe::when_any(std::vector<troupe::future<int>>{}).get();
  EXPECT_EQ(none.index, std::numeric_limits<std::size_t>::max());
}

TEST(dataflow, calls_with_values_once_all_inputs_are_ready) {
  troupe::promise<int> a;
  troupe::promise<void> gate;
  auto result = troupe::dataflow(
      [](int x, double y, const std::string& z) {
        return z + std::to_string(x + static_cast<int>(y));
      },
      a.get_future(), gate.get_future(), 2.0, std::string{"sum="});
  a.set_value(40);
  EXPECT_FALSE(result.is_ready());
  gate.set_value();
  EXPECT_EQ(result.get(), "sum=42");
}

TEST(dataflow, an_input_error_skips_the_function) {
  bool called = false;
  auto result = troupe::dataflow(
      [&](int, int) {
        called = true;
        return 0;
      },
      troupe::make_ready_future(1),
      troupe::make_exceptional_future<int>(std::runtime_error{"lost"}));
  EXPECT_THROW(result.get(), std::runtime_error);
  EXPECT_FALSE(called);
}

TEST(dataflow, unwraps_a_returned_future) {
  auto result = troupe::dataflow([](int x) { return troupe::make_ready_future(x * 3); },
                                 troupe::make_ready_future(5));
  static_assert(std::is_same_v<decltype(result), troupe::future<int>>);
  EXPECT_EQ(result.get(), 15);
}

// Concurrency: a large fan-in completed from several threads at once.
TEST(when_all_contention, hundred_thousand_inputs_set_from_four_threads) {
  constexpr int count = 100000;
  std::vector<troupe::promise<int>> promises(count);
  std::vector<troupe::future<int>> inputs;
  inputs.reserve(count);
  for (auto& p : promises) inputs.push_back(p.get_future());
  auto all = troupe::when_all(std::move(inputs));
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t)
    producers.emplace_back([&, t] {
      for (int i = t; i < count; i += 4) promises[i].set_value(i);
    });
  for (auto& t : producers) t.join();
  long sum = 0;
  for (auto& f : all.get()) sum += f.get();
  EXPECT_EQ(sum, long{count} * (count - 1) / 2);
}

}  // namespace
