// The completion queue with events of a fake backend (internal, so tested directly): a driver
// may call back after the event reported itself complete, and after the queue is gone; polling,
// the queue tells the results' executor to expect work while commands are in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "device/completion_queue.hpp"
#include "troupe/async/future.hpp"

namespace troupe::detail {
namespace {

/// An event that is complete once told so, and that keeps the callback it is given instead of
/// calling it: the test calls it, when it likes.
class held_callback_event final : public backend_event {
 public:
  const void* domain() const noexcept override { return this; }
  bool query() override { return complete.load(); }
  void notify(std::function<void()> done) override {
    std::lock_guard guard{mutex_};
    callback_ = std::move(done);
  }
  std::function<void()> take_callback() {
    std::lock_guard guard{mutex_};
    return std::move(callback_);
  }
  std::atomic<bool> complete{false};

 private:
  std::mutex mutex_;
  std::function<void()> callback_;
};

/// Runs jobs inline and records the hints it is given.
class hint_recorder final : public executor {
 public:
  void schedule(job* j) override { j->run(); }
  void expect_work_until(std::chrono::steady_clock::time_point until) noexcept override {
    ++hints;
    latest = until.time_since_epoch().count();
  }
  std::atomic<int> hints{0};
  std::atomic<std::chrono::steady_clock::rep> latest{0};
};

TEST(completion_queue, a_driver_that_calls_back_after_the_queue_is_gone_finds_nothing) {
  intrusive_ptr<held_callback_event> first{new held_callback_event, adopt_ref};
  intrusive_ptr<held_callback_event> second{new held_callback_event, adopt_ref};
  intrusive_ptr<void_result> first_result{new void_result({}), adopt_ref};
  intrusive_ptr<void_result> second_result{new void_result({}), adopt_ref};
  auto first_done = future_access::make<future<void>>(first_result->shared());
  auto second_done = future_access::make<future<void>>(second_result->shared());
  std::function<void()> late;
  {
    hint_recorder results;
    completion_queue queue{completion_queue::mode::callback, results};
    queue.watch(first, first_result);
    queue.watch(second, second_result);
    first->complete = true;
    second->complete = true;
    // The second's callback wakes the thread, which finishes both: the first's callback has
    // not come yet.
    auto second_callback = second->take_callback();
    ASSERT_TRUE(second_callback);
    second_callback();
    std::move(first_done).get();
    std::move(second_done).get();
    late = first->take_callback();
    ASSERT_TRUE(late);
  }
  late();  // the queue is gone: it must not be touched (ASan reports it if it is)
}

TEST(completion_queue, polling_it_has_work_expected_while_a_command_is_in_flight) {
  using namespace std::chrono;
  hint_recorder results;
  intrusive_ptr<held_callback_event> event{new held_callback_event, adopt_ref};
  intrusive_ptr<void_result> result{new void_result({}), adopt_ref};
  auto done = future_access::make<future<void>>(result->shared());
  {
    completion_queue queue{completion_queue::mode::polling, results};
    EXPECT_EQ(results.hints.load(), 0) << "nothing in flight, nothing expected";
    const auto watched = steady_clock::now();
    queue.watch(event, result);
    const auto give_up = steady_clock::now() + seconds(20);
    while (results.hints.load() == 0 && steady_clock::now() < give_up)
      std::this_thread::sleep_for(microseconds(100));
    ASSERT_GT(results.hints.load(), 0);
    // Expected within the 2 ms the thread spins for after the command arrived.
    EXPECT_GT(results.latest.load(), watched.time_since_epoch().count());
    EXPECT_LE(results.latest.load(),
              (steady_clock::now() + milliseconds(2)).time_since_epoch().count());
    event->complete = true;
    std::move(done).get();
  }
}

TEST(completion_queue, waiting_for_callbacks_it_expects_nothing) {
  hint_recorder results;
  intrusive_ptr<held_callback_event> event{new held_callback_event, adopt_ref};
  intrusive_ptr<void_result> result{new void_result({}), adopt_ref};
  auto done = future_access::make<future<void>>(result->shared());
  {
    completion_queue queue{completion_queue::mode::callback, results};
    queue.watch(event, result);
    event->complete = true;
    auto callback = event->take_callback();
    ASSERT_TRUE(callback);
    callback();
    std::move(done).get();
  }
  EXPECT_EQ(results.hints.load(), 0);
}

}  // namespace
}  // namespace troupe::detail
