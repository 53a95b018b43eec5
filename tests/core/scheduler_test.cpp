// The scheduler (internal, so tested directly). Its standby: while work is expected, one worker
// keeps searching instead of parking; afterwards it parks, and stop() ends it. Its spares: a
// worker blocked in get() is replaced, and one worker retires once it runs again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "troupe/async/promise.hpp"
#include "troupe/core/detail/scheduler.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using troupe::detail::scheduler;

/// Waits until `condition` holds, for at most 20 s: these are liveness checks, not timings.
bool eventually(const std::function<bool()>& condition) {
  const auto give_up = clock_type::now() + 20s;
  while (!condition()) {
    if (clock_type::now() > give_up) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

struct counting_job final : troupe::job {
  explicit counting_job(std::atomic<int>& counter) : runs(counter) {}
  void run() noexcept override {
    runs.fetch_add(1);
    delete this;
  }
  std::atomic<int>& runs;
};

TEST(scheduler, a_worker_stands_by_while_work_is_expected_then_parks) {
  scheduler s{3, scheduler::default_spin_rounds, true};
  s.start();
  ASSERT_TRUE(eventually([&] { return s.idle(); }));
  EXPECT_FALSE(s.expects_work());

  s.expect_work_until(clock_type::now() + 500ms);
  EXPECT_TRUE(s.expects_work());
  ASSERT_TRUE(eventually([&] { return s.standing_by(); }));
  EXPECT_TRUE(s.idle()) << "a worker that stands by runs nothing";

  // Work from outside is taken by the worker that stands by (or any other).
  std::atomic<int> runs{0};
  for (int i = 0; i < 1000; ++i) s.schedule(new counting_job{runs});
  ASSERT_TRUE(eventually([&] { return runs.load() == 1000; }));

  // Once the time has passed, every worker parks.
  ASSERT_TRUE(eventually([&] { return !s.expects_work() && !s.standing_by() && s.idle(); }));
  s.stop();
  EXPECT_EQ(runs.load(), 1000);
}

/// Runs `body` once.
template <class F>
struct function_job final : troupe::job {
  explicit function_job(F f) : body(std::move(f)) {}
  void run() noexcept override {
    body();
    delete this;
  }
  F body;
};

TEST(scheduler, a_worker_that_stood_by_hands_on_what_else_was_sent) {
  // Sent while a worker stands by, two jobs wake nobody; whichever the worker takes first, the
  // other must run too, although the first blocks until it has: the worker wakes another.
  for (int attempt = 0; attempt < 20; ++attempt) {
    scheduler s{3, scheduler::default_spin_rounds, true};
    s.start();
    s.expect_work_until(clock_type::now() + 10min);
    ASSERT_TRUE(eventually([&] { return s.standing_by() && s.idle(); }));
    std::atomic<bool> second_ran{false};
    std::atomic<bool> first_saw_it{false};
    auto first = [&] { first_saw_it = eventually([&] { return second_ran.load(); }); };
    auto second = [&] { second_ran = true; };
    s.schedule(new function_job{first});
    s.schedule(new function_job{second});
    ASSERT_TRUE(eventually([&] { return second_ran.load(); }));
    s.stop();
    EXPECT_TRUE(first_saw_it.load());
  }
}

TEST(scheduler, a_standby_asked_for_too_late_does_not_block_the_next) {
  scheduler s{2, scheduler::default_spin_rounds, true};
  s.start();
  ASSERT_TRUE(eventually([&] { return s.idle(); }));
  s.expect_work_until(clock_type::now() - 1ms);  // already past: nobody stands by for it
  EXPECT_FALSE(s.expects_work());
  ASSERT_TRUE(eventually([&] { return s.idle() && !s.standing_by(); }));

  s.expect_work_until(clock_type::now() + 10min);
  ASSERT_TRUE(eventually([&] { return s.standing_by(); }));
  s.stop();  // ends the standby long before its time
  EXPECT_FALSE(s.standing_by());
}

TEST(scheduler, without_standby_hints_change_nothing) {
  scheduler s{2, scheduler::default_spin_rounds, false};
  s.start();
  s.expect_work_until(clock_type::now() + 10min);
  EXPECT_FALSE(s.expects_work());
  ASSERT_TRUE(eventually([&] { return s.idle(); }));
  EXPECT_FALSE(s.standing_by());
  std::atomic<int> runs{0};
  s.schedule(new counting_job{runs});
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  s.stop();
}

TEST(scheduler, hints_from_many_threads_keep_one_worker_standing_by) {
  scheduler s{4, scheduler::default_spin_rounds, true};
  s.start();
  std::atomic<int> runs{0};
  // Each thread hints and sends jobs, then hints on alone until the main thread has looked for
  // one worker standing by while the other three park.
  std::atomic<bool> looked{false};
  std::vector<std::thread> hinters;
  for (int t = 0; t < 3; ++t) {
    hinters.emplace_back([&] {
      for (int i = 0; i < 2000 || !looked.load(); ++i) {
        s.expect_work_until(clock_type::now() + 2ms);
        if (i < 2000 && i % 4 == 0) s.schedule(new counting_job{runs});
        std::this_thread::yield();
      }
    });
  }
  const bool all_ran = eventually([&] { return runs.load() == 1500; });
  // idle(): the parked workers and the one that stands by are all of them, and nothing queued.
  const bool one_stood_by = all_ran && eventually([&] { return s.standing_by() && s.idle(); });
  looked = true;
  for (auto& t : hinters) t.join();
  ASSERT_TRUE(all_ran) << runs.load() << " of 1500 jobs ran";
  EXPECT_TRUE(one_stood_by) << "no worker stood by alone while the hints came";
  // Once the hints stop, the standby ends too.
  ASSERT_TRUE(eventually([&] { return !s.standing_by() && s.idle(); }));
  s.stop();
  EXPECT_EQ(runs.load(), 1500);
}

TEST(scheduler, a_blocked_worker_is_replaced_by_a_spare_that_retires_after) {
  scheduler s{1, scheduler::default_spin_rounds, false, 4};
  s.start();
  for (int round = 0; round < 10; ++round) {
    troupe::promise<int> gate;
    auto opened = gate.get_future().share();
    std::atomic<int> got{0};
    std::atomic<int> runs{0};
    s.schedule(new function_job{[&] { got = opened.get(); }});
    ASSERT_TRUE(eventually([&] { return !s.idle(); }));
    // The only worker blocks; a job sent now runs all the same, on the spare.
    s.schedule(new counting_job{runs});
    ASSERT_TRUE(eventually([&] { return runs.load() == 1; })) << "round " << round;
    EXPECT_FALSE(s.quiet_wakeups()) << "a worker blocked in get() runs a job";
    gate.set_value(round + 1);
    ASSERT_TRUE(eventually([&] { return got.load() == round + 1 && s.idle(); }));
    // One spare serves every round: the one that retired is woken again.
    EXPECT_EQ(s.started_workers(), 2u) << "round " << round;
  }
  s.stop();
}

TEST(scheduler, quiet_wakeups_change_whenever_a_parked_worker_runs) {
  scheduler s{2};
  s.start();
  ASSERT_TRUE(eventually([&] { return s.quiet_wakeups().has_value(); }));
  auto before = s.quiet_wakeups();
  std::atomic<int> runs{0};
  s.schedule(new counting_job{runs});
  ASSERT_TRUE(eventually([&] { return runs.load() == 1 && s.quiet_wakeups().has_value(); }));
  EXPECT_NE(s.quiet_wakeups(), before);
  s.stop();
}

}  // namespace
