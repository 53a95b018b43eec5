// future::get() inside a handler: the worker blocks and a spare takes its place; no other
// handler ever runs on the blocked worker's stack, so a handler nested above another cannot
// deadlock it. Every wait here has a generous bound, a hang guard that turns a deadlock into a
// failure that says what hung; none of them times anything.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "troupe/troupe.hpp"

namespace {

using namespace std::chrono_literals;
using troupe::actor;
using troupe::actor_system;
using troupe::behavior;
using troupe::errc;
using troupe::event_based_actor;

/// Far above anything these scenarios need; reached only when something hangs.
constexpr auto hang_guard = 30s;

struct start {};
struct go {};
struct hold {};

troupe::config with_threads(std::size_t threads) {
  troupe::config cfg;
  cfg.threads = threads;
  return cfg;
}

/// Keeps one worker busy outside troupe's futures (a plain std::future wait, which nobody
/// compensates), so that the scenario has one worker left, as with threads = 1.
class held_worker {
 public:
  explicit held_worker(actor_system& sys) {
    holder_ = sys.spawn([this, released = release_.get_future().share()](event_based_actor*) {
      return behavior{[this, released](hold) {
        started_.set_value();
        released.wait();  // a copy: this object may be gone when the wait returns
      }};
    });
    troupe::send(holder_, hold{});
    started_.get_future().wait();
  }
  held_worker(const held_worker&) = delete;
  held_worker& operator=(const held_worker&) = delete;
  ~held_worker() { release_.set_value(); }

 private:
  std::promise<void> started_;
  std::promise<void> release_;
  actor holder_;
};

/// A's handler tells C to start, then blocks in get() for B's answer. B answers with the
/// future of `gate`, which C's handler sets before it asks A and blocks in get() itself. A
/// worker that ran C's handler on the stack of A's blocked get() could never return to A: C
/// waits for A, and A for C's frame to end. C's request has a timeout only as a hang guard.
void expect_nested_waits_complete(actor_system& sys) {
  troupe::promise<int> gate;
  auto gate_future = gate.get_future().share();
  troupe::promise<int> c_result;
  auto c_got = c_result.get_future();

  auto b = sys.spawn([gate_future](int x) {
    return gate_future.then(troupe::inline_execution, [x](int opened) { return opened + x; });
  });
  auto c = sys.spawn([&gate, &c_result](event_based_actor* self) {
    return behavior{[self, &gate, &c_result](go) {
      auto a = self->current_sender();
      gate.set_value(40);
      try {
        c_result.set_value(troupe::request<int>(a, hang_guard, 7).get());
      } catch (...) {
        c_result.set_exception(std::current_exception());
      }
    }};
  });
  auto a = sys.spawn([b, c](event_based_actor* self) {
    return behavior{[self, b, c](start) {
                      self->send(c, go{});
                      return troupe::request<int>(b, 2).get();
                    },
                    [](int x) { return x * 10; }};
  });

  // The outer guard is the longer: where C's handler hangs, C's own timeout says so first.
  auto answer = troupe::request<int>(a, 2 * hang_guard, start{});
  try {
    EXPECT_EQ(answer.get(), 42);
  } catch (const troupe::error& e) {
    ADD_FAILURE() << "A never answered (" << e.what() << ")";
  }
  try {
    EXPECT_EQ(c_got.get(), 70);
  } catch (const troupe::error& e) {
    ADD_FAILURE() << "C's request to A failed (" << e.what()
                  << "): C's handler ran on the stack of A's blocked get(), so A could not "
                     "return to answer it";
  }
}

TEST(blocking_get, a_handler_is_never_nested_above_a_blocked_get_on_one_worker) {
  actor_system sys{with_threads(1)};
  expect_nested_waits_complete(sys);
}

TEST(blocking_get, a_handler_is_never_nested_above_a_blocked_get_on_two_workers) {
  actor_system sys{with_threads(2)};
  held_worker busy{sys};
  expect_nested_waits_complete(sys);
}

TEST(blocking_get, a_chain_of_handlers_each_blocked_on_the_next_completes_on_one_worker) {
  // Each link asks the next and blocks: 20 workers blocked at once, one spare each.
  actor_system sys{with_threads(1)};
  auto next = sys.spawn([](int x) { return x; });
  for (int link = 0; link < 20; ++link)
    next = sys.spawn([next](int x) { return troupe::request<int>(next, x + 1).get(); });
  EXPECT_EQ(troupe::request<int>(next, hang_guard, 0).get(), 20);
}

TEST(blocking_get, a_timed_wait_on_a_worker_sees_the_job_it_waits_for_run) {
  actor_system sys{with_threads(1)};
  auto inner = sys.spawn([](int x) { return x + 1; });
  auto outer = sys.spawn([inner](int x) {
    auto f = troupe::request<int>(inner, x);
    if (f.wait_for(hang_guard) != std::future_status::ready)
      throw troupe::error(errc::runtime_error, "the inner request never ran");
    return f.get() * 2;
  });
  EXPECT_EQ(troupe::request<int>(outer, hang_guard, 4).get(), 10);
}

TEST(blocking_get, get_beyond_the_spare_limit_fails_naming_the_limit_and_the_option) {
  // One worker, one spare: A1 blocks (the spare takes its place), then A2 on the spare blocks
  // too, with no spare left.
  auto cfg = with_threads(1);
  cfg.spare_threads = 1;
  actor_system sys{cfg};
  troupe::promise<int> gate;
  std::promise<std::string> a2_error;
  auto b = sys.spawn([](int x) { return x; });
  auto a2 = sys.spawn([b, &a2_error](go) {
    try {
      troupe::request<int>(b, 1).get();
      a2_error.set_value("get() returned");
    } catch (const troupe::error& e) {
      a2_error.set_value(std::string{to_string(e.code())} + ": " + e.what());
    }
  });
  auto gate_future = gate.get_future().share();
  auto a1 = sys.spawn([a2, gate_future](event_based_actor* self) {
    return behavior{[self, a2, gate_future](start) {
      self->send(a2, go{});
      return gate_future.get();
    }};
  });
  auto answer = troupe::request<int>(a1, hang_guard, start{});
  auto reported = a2_error.get_future();
  ASSERT_EQ(reported.wait_for(hang_guard), std::future_status::ready) << "A2 never reported";
  auto text = reported.get();
  EXPECT_NE(text.find("limit_reached"), std::string::npos) << text;
  EXPECT_NE(text.find("1 spare thread"), std::string::npos) << text;
  EXPECT_NE(text.find("config::spare_threads"), std::string::npos) << text;
  EXPECT_NE(text.find("--troupe.spare-threads"), std::string::npos) << text;
  gate.set_value(5);
  EXPECT_EQ(answer.get(), 5);
}

TEST(blocking_get, without_spares_get_on_a_worker_fails_unless_the_result_is_there) {
  auto cfg = with_threads(1);
  cfg.spare_threads = 0;
  actor_system sys{cfg};
  auto inner = sys.spawn([](int x) { return x + 1; });
  auto blocking = sys.spawn([inner](int x) { return troupe::request<int>(inner, x).get(); });
  auto ready = sys.spawn([](int x) { return troupe::make_ready_future(x).get(); });
  EXPECT_EQ(troupe::request<int>(ready, hang_guard, 3).get(), 3);
  try {
    troupe::request<int>(blocking, hang_guard, 1).get();
    ADD_FAILURE() << "get() on the only worker, with no spare, returned";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::unhandled_exception) << e.what();
    EXPECT_NE(std::string{e.what()}.find("0 spare threads"), std::string::npos) << e.what();
  }
}

}  // namespace
