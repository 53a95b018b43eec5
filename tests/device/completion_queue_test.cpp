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

/// A command for the queue to watch: its event, complete once told so, and the future that its
/// end satisfies.
struct watched_command {
  intrusive_ptr<held_callback_event> event{new held_callback_event, adopt_ref};
  intrusive_ptr<void_result> result{new void_result({}), adopt_ref};
  future<void> done = future_access::make<future<void>>(result->shared());

  void watch_on(completion_queue& queue) { queue.watch(event, result); }
};

/// An event that counts how many of its kind were dropped, and where the last one was.
class counted_event final : public backend_event {
 public:
  struct tally {
    std::atomic<int> dropped{0};
    std::mutex mutex;
    std::thread::id last_on;  // guarded by mutex
    std::thread::id where() {
      std::lock_guard guard{mutex};
      return last_on;
    }
    /// Waits, at most 20 s, until `count` were dropped.
    bool wait_for(int count) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (dropped.load() < count && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      return dropped.load() >= count;
    }
  };
  explicit counted_event(tally& t) : tally_(t) {}
  ~counted_event() override {
    {
      std::lock_guard guard{tally_.mutex};
      tally_.last_on = std::this_thread::get_id();
    }
    tally_.dropped.fetch_add(1);
  }
  const void* domain() const noexcept override { return this; }
  bool query() override { return true; }
  void notify(std::function<void()> done) override { done(); }

 private:
  tally& tally_;
};

/// Whether `queue`'s thread falls asleep within 20 s (polled: it tells nobody).
bool asleep_soon(completion_queue& queue) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!queue.sleeps() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  return queue.sleeps();
}

/// A backend queue that counts, as counted_event does, where it was dropped; nothing is ever
/// enqueued on it.
class counted_queue final : public backend_queue {
 public:
  explicit counted_queue(counted_event::tally& t) : tally_(t) {}
  ~counted_queue() override {
    {
      std::lock_guard guard{tally_.mutex};
      tally_.last_on = std::this_thread::get_id();
    }
    tally_.dropped.fetch_add(1);
  }
  event_ptr write(backend_memory&, std::size_t, const void*, std::size_t, bool,
                  wait_list) override {
    return unused();
  }
  event_ptr read(backend_memory&, std::size_t, void*, std::size_t, bool,
                 intrusive_ptr<destination_gate>, wait_list) override {
    return unused();
  }
  bool stages_reads_of(std::size_t) const noexcept override { return false; }
  event_ptr fill(backend_memory&, std::size_t, std::size_t, const void*, std::size_t,
                 wait_list) override {
    return unused();
  }
  event_ptr copy(backend_memory&, std::size_t, backend_memory&, std::size_t, std::size_t,
                 wait_list) override {
    return unused();
  }
  event_ptr launch(backend_kernel&, const launch_shape&, std::span<const kernel_argument>,
                   wait_list, launch_event) override {
    return unused();
  }
  event_ptr mark() override { return unused(); }
  void flush() override {}

 private:
  [[noreturn]] static event_ptr unused() {
    throw error(errc::runtime_error, "counted_queue: no command is enqueued on it");
  }
  counted_event::tally& tally_;
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
  watched_command first, second;
  std::function<void()> late;
  {
    hint_recorder results;
    completion_queue queue{completion_queue::mode::callback, results};
    first.watch_on(queue);
    second.watch_on(queue);
    first.event->complete = true;
    second.event->complete = true;
    // The second's callback wakes the thread, which finishes both: the first's callback has
    // not come yet.
    auto second_callback = second.event->take_callback();
    ASSERT_TRUE(second_callback);
    second_callback();
    std::move(first.done).get();
    std::move(second.done).get();
    late = first.event->take_callback();
    ASSERT_TRUE(late);
  }
  late();  // the queue is gone: it must not be touched (ASan reports it if it is)
}

TEST(completion_queue, polling_it_has_work_expected_while_a_command_is_in_flight) {
  using namespace std::chrono;
  hint_recorder results;
  watched_command command;
  {
    completion_queue queue{completion_queue::mode::polling, results};
    EXPECT_EQ(results.hints.load(), 0) << "nothing in flight, nothing expected";
    const auto watched = steady_clock::now();
    command.watch_on(queue);
    const auto give_up = steady_clock::now() + seconds(20);
    while (results.hints.load() == 0 && steady_clock::now() < give_up)
      std::this_thread::sleep_for(microseconds(100));
    ASSERT_GT(results.hints.load(), 0);
    // Expected within the 2 ms the thread spins for after the command arrived.
    EXPECT_GT(results.latest.load(), watched.time_since_epoch().count());
    EXPECT_LE(results.latest.load(),
              (steady_clock::now() + milliseconds(2)).time_since_epoch().count());
    command.event->complete = true;
    std::move(command.done).get();
  }
}

TEST(completion_queue, waiting_for_callbacks_it_expects_nothing) {
  hint_recorder results;
  watched_command command;
  {
    completion_queue queue{completion_queue::mode::callback, results};
    command.watch_on(queue);
    command.event->complete = true;
    auto callback = command.event->take_callback();
    ASSERT_TRUE(callback);
    callback();
    std::move(command.done).get();
  }
  EXPECT_EQ(results.hints.load(), 0);
}

TEST(completion_queue, drops_an_event_left_to_it_on_its_thread_once_it_is_idle) {
  for (auto mode : {completion_queue::mode::polling, completion_queue::mode::callback}) {
    hint_recorder results;
    counted_event::tally tally;
    completion_queue queue{mode, results};
    // The thread falls asleep first: the event must wake it.
    ASSERT_TRUE(asleep_soon(queue)) << "the idle thread did not fall asleep";
    queue.retirement()->release_later(event_ptr{new counted_event(tally), adopt_ref});
    ASSERT_TRUE(tally.wait_for(1)) << "the idle thread did not drop the event";
    EXPECT_NE(tally.where(), std::this_thread::get_id());
    EXPECT_EQ(queue.retirement()->waiting(), 0u);
  }
}

TEST(completion_queue, drops_a_queue_left_to_it_on_its_thread) {
  // A backend queue's destructor waits for the device: a worker that drops a queue leaves it
  // here (queue_state).
  hint_recorder results;
  counted_event::tally tally;
  completion_queue queue{completion_queue::mode::polling, results};
  queue.retirement()->release_later(std::make_unique<counted_queue>(tally));
  ASSERT_TRUE(tally.wait_for(1)) << "the idle thread did not drop the queue";
  EXPECT_NE(tally.where(), std::this_thread::get_id());
  EXPECT_EQ(queue.retirement()->waiting(), 0u);
}

TEST(completion_queue, keeps_events_left_to_it_while_a_command_is_in_flight_until_many_wait) {
  hint_recorder results;
  counted_event::tally tally;
  watched_command running;
  completion_queue queue{completion_queue::mode::polling, results};
  running.watch_on(queue);
  const int most = static_cast<int>(completion_queue::most_retired);
  for (int i = 0; i + 1 < most; ++i)
    queue.retirement()->release_later(event_ptr{new counted_event(tally), adopt_ref});
  // The command never ends meanwhile, so the thread is never idle: it keeps them all. Time
  // passes on purpose, for a thread that wrongly dropped them to do so.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(tally.dropped.load(), 0);
  EXPECT_EQ(queue.retirement()->waiting(), completion_queue::most_retired - 1);
  queue.retirement()->release_later(event_ptr{new counted_event(tally), adopt_ref});
  ASSERT_TRUE(tally.wait_for(most)) << "the busy thread kept " << most << " events";
  EXPECT_NE(tally.where(), std::this_thread::get_id());
  running.event->complete = true;
  std::move(running.done).get();
}

TEST(completion_queue, drops_events_left_to_it_when_it_stops_and_after_it_where_they_are_given) {
  hint_recorder results;
  counted_event::tally tally;
  watched_command running;
  intrusive_ptr<detail::retirement> retirement;
  {
    completion_queue queue{completion_queue::mode::polling, results};
    retirement = queue.retirement();
    running.watch_on(queue);
    retirement->release_later(event_ptr{new counted_event(tally), adopt_ref});
    running.event->complete = true;
  }  // stopped: the command ended, and the event was dropped
  std::move(running.done).get();
  EXPECT_EQ(tally.dropped.load(), 1);
  retirement->release_later(event_ptr{new counted_event(tally), adopt_ref});
  EXPECT_EQ(tally.dropped.load(), 2);
  EXPECT_EQ(tally.where(), std::this_thread::get_id());
  EXPECT_EQ(retirement->waiting(), 0u);
}

}  // namespace
}  // namespace troupe::detail
