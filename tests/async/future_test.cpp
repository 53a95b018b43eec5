// Futures and promises: values, continuations, unwrapping, errors, executors, contention.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "troupe/async.hpp"

namespace {

using namespace std::chrono_literals;
using troupe::errc;

/// An executor that counts its jobs and runs them on one thread of its own. The queue lives in
/// a block the thread shares, because the last reference to the executor may be dropped by a
/// continuation on that very thread (then the thread is detached and finishes on its own).
class counting_executor final : public troupe::executor {
 public:
  counting_executor() : queue_(std::make_shared<queue>()), thread_([q = queue_] { q->loop(); }) {}
  ~counting_executor() override {
    {
      std::lock_guard guard{queue_->mutex};
      queue_->stop = true;
    }
    queue_->wake.notify_one();
    if (std::this_thread::get_id() == thread_.get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
  void schedule(troupe::job* j) override {
    ++scheduled;
    {
      std::lock_guard guard{queue_->mutex};
      queue_->jobs.push_back(j);
    }
    queue_->wake.notify_one();
  }
  std::atomic<int> scheduled{0};
  std::thread::id thread_id() const { return thread_.get_id(); }

 private:
  struct queue {
    void loop() {
      std::unique_lock lock{mutex};
      for (;;) {
        wake.wait(lock, [this] { return stop || !jobs.empty(); });
        if (jobs.empty()) return;
        auto* j = jobs.front();
        jobs.erase(jobs.begin());
        lock.unlock();
        j->run();
        lock.lock();
      }
    }
    std::mutex mutex;
    std::condition_variable wake;
    std::vector<troupe::job*> jobs;
    bool stop = false;
  };
  std::shared_ptr<queue> queue_;
  std::thread thread_;
};

template <class F>
errc code_of(F&& f) {
  try {
    f();
  } catch (const troupe::error& e) {
    return e.code();
  }
  return errc::none;
}

/// Told by a future's state when somebody starts to wait for it (state_origin::awaited).
class wait_signal final : public troupe::detail::state_origin {
 public:
  void awaited() noexcept override {
    {
      std::lock_guard guard{mutex_};
      waited_ = true;
    }
    changed_.notify_all();
  }
  /// Whether somebody started to wait within 30 s.
  bool wait() {
    std::unique_lock lock{mutex_};
    return changed_.wait_for(lock, 30s, [this] { return waited_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool waited_ = false;
};

TEST(future, value_set_before_and_after_get) {
  troupe::promise<int> early;
  early.set_value(7);
  EXPECT_EQ(early.get_future().get(), 7);

  troupe::promise<std::string> late;
  auto f = late.get_future();
  auto signal = troupe::detail::make_counted<wait_signal>();
  troupe::detail::future_access::state(f)->set_origin(signal);
  bool waited_first = false;
  std::thread producer{[&] {
    waited_first = signal->wait();  // set only once get() below waits for it
    late.set_value("late");
  }};
  EXPECT_EQ(f.get(), "late");
  producer.join();
  EXPECT_TRUE(waited_first) << "get() did not start to wait";
  EXPECT_FALSE(f.valid());
}

TEST(future, then_chain_passes_values_and_unwraps_returned_futures) {
  troupe::promise<int> p;
  auto f =
      p.get_future()
          .then(troupe::inline_execution, [](int x) { return x + 1; })
          .then(troupe::inline_execution, [](int x) { return troupe::make_ready_future(x * 10); })
          .then(troupe::inline_execution,
                [](troupe::future<int> ready) { return std::to_string(ready.get()); });
  static_assert(std::is_same_v<decltype(f), troupe::future<std::string>>);
  p.set_value(4);
  EXPECT_EQ(f.get(), "50");
}

TEST(future, errors_skip_value_continuations_and_reach_the_end) {
  troupe::promise<int> p;
  int calls = 0;
  auto f = p.get_future()
               .then(troupe::inline_execution,
                     [&](int x) {
                       ++calls;
                       return x;
                     })
               .then(troupe::inline_execution, [&](int) { ++calls; });
  p.set_exception(std::make_exception_ptr(std::runtime_error{"sensor offline"}));
  EXPECT_THROW(
      {
        try {
          f.get();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "sensor offline");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(calls, 0);
}

TEST(future, a_throwing_continuation_fails_its_future) {
  auto f = troupe::make_ready_future(1).then(
      troupe::inline_execution, [](int) -> int { throw std::logic_error{"bad step"}; });
  EXPECT_THROW(f.get(), std::logic_error);
}

TEST(future, future_taking_continuation_sees_the_error) {
  auto f = troupe::make_exceptional_future<int>(troupe::error{errc::invalid_argument, "no"})
               .then(troupe::inline_execution, [](troupe::future<int> ready) {
                 return ready.has_exception() ? -1 : ready.get();
               });
  EXPECT_EQ(f.get(), -1);
}

TEST(future, broken_promise_fails_the_future) {
  troupe::future<int> f;
  {
    troupe::promise<int> p;
    f = p.get_future();
  }
  EXPECT_EQ(code_of([&] { f.get(); }), errc::broken_promise);
}

TEST(future, misuse_is_reported) {
  troupe::promise<int> p;
  auto f = p.get_future();
  EXPECT_EQ(code_of([&] { p.get_future(); }), errc::invalid_argument);
  p.set_value(1);
  EXPECT_EQ(code_of([&] { p.set_value(2); }), errc::promise_already_satisfied);
  EXPECT_EQ(f.get(), 1);
  EXPECT_EQ(code_of([&] { f.get(); }), errc::no_state);
  troupe::future<void> empty;
  EXPECT_EQ(code_of([&] { empty.wait(); }), errc::no_state);
}

TEST(future, wait_for_times_out_then_succeeds) {
  troupe::promise<void> p;
  auto f = p.get_future();
  EXPECT_EQ(f.wait_for(2ms), std::future_status::timeout);
  p.set_value();
  EXPECT_EQ(f.wait_for(0ms), std::future_status::ready);
  f.get();
}

TEST(future, continuations_run_on_the_named_executor) {
  auto ex = troupe::detail::make_counted<counting_executor>();
  troupe::promise<int> p;
  auto f = p.get_future().then(*ex, [&](int x) {
    EXPECT_EQ(std::this_thread::get_id(), ex->thread_id());
    return x * 2;
  });
  p.set_value(21);
  EXPECT_EQ(f.get(), 42);
  EXPECT_EQ(ex->scheduled.load(), 1);
}

TEST(future, continuations_default_to_the_promise_executor) {
  auto ex = troupe::detail::make_counted<counting_executor>();
  troupe::promise<int> p{*ex};
  auto f = p.get_future().then([](int x) { return x + 1; }).then([](int x) { return x + 1; });
  p.set_value(1);
  EXPECT_EQ(f.get(), 3);
  EXPECT_EQ(ex->scheduled.load(), 2);
}

TEST(future, inline_continuation_runs_on_the_completing_thread) {
  troupe::promise<void> p;
  std::thread::id ran_on;
  auto f =
      p.get_future().then(troupe::inline_execution, [&] { ran_on = std::this_thread::get_id(); });
  std::thread producer{[&] { p.set_value(); }};
  auto producer_id = producer.get_id();
  producer.join();
  f.get();
  EXPECT_EQ(ran_on, producer_id);
}

TEST(shared_future, many_readers_and_continuations) {
  troupe::promise<std::vector<int>> p;
  troupe::shared_future<std::vector<int>> shared = p.get_future().share();
  auto copy = shared;
  auto sum = shared.then(troupe::inline_execution, [](const std::vector<int>& v) {
    int s = 0;
    for (int x : v) s += x;
    return s;
  });
  auto size = copy.then(troupe::inline_execution,
                        [](troupe::shared_future<std::vector<int>> f) { return f.get().size(); });
  p.set_value(std::vector<int>{1, 2, 3});
  EXPECT_EQ(sum.get(), 6);
  EXPECT_EQ(size.get(), 3u);
  EXPECT_EQ(shared.get().size(), 3u);
  EXPECT_EQ(&shared.get(), &copy.get());
}

// Concurrency: many threads race to attach continuations and wait while others complete.
TEST(future_contention, racing_then_wait_and_set) {
  constexpr int rounds = 2000;
  constexpr int readers = 4;
  for (int round = 0; round < rounds; ++round) {
    troupe::promise<int> p;
    auto shared = p.get_future().share();
    std::atomic<int> seen{0};
    std::vector<std::thread> threads;
    std::vector<troupe::future<int>> results(readers);
    for (int r = 0; r < readers; ++r)
      threads.emplace_back([&, r] {
        results[r] = shared.then(troupe::inline_execution, [&seen, r](const int& x) {
          seen.fetch_add(1);
          return x + r;
        });
      });
    threads.emplace_back([&] { p.set_value(round); });
    for (auto& t : threads) t.join();
    for (int r = 0; r < readers; ++r) EXPECT_EQ(results[r].get(), round + r);
    EXPECT_EQ(seen.load(), readers);
  }
}

TEST(future_contention, blocking_get_from_many_threads) {
  constexpr int count = 500;
  std::vector<troupe::promise<int>> promises(count);
  std::vector<troupe::future<int>> futures;
  for (auto& p : promises) futures.push_back(p.get_future());
  std::atomic<long> total{0};
  std::vector<std::thread> consumers;
  for (int t = 0; t < 4; ++t)
    consumers.emplace_back([&, t] {
      for (int i = t; i < count; i += 4) total += futures[i].get();
    });
  std::thread producer{[&] {
    for (int i = count - 1; i >= 0; --i) promises[i].set_value(i);
  }};
  producer.join();
  for (auto& c : consumers) c.join();
  EXPECT_EQ(total.load(), long{count} * (count - 1) / 2);
}

}  // namespace
