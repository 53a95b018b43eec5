// The actor system's destructor: it waits while anything in flight can still wake an actor, and
// ends the actors that nothing can wake any more with errc::user_shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "test_config.hpp"
#include "troupe/troupe.hpp"

namespace {

using namespace std::chrono_literals;
using troupe::actor;
using troupe::actor_system;
using troupe::behavior;
using troupe::errc;
using troupe::event_based_actor;
using troupe::test::two_threads;

/// Waits until `condition` holds, for at most 30 s (a hang guard, not a timing).
bool eventually(const std::function<bool()>& condition) {
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

/// Records how an actor ended.
class exit_record {
 public:
  void watch(const actor& a) {
    a->attach_hook([this](const troupe::error& reason) {
      code_.store(reason.code());
      ended_.store(true);
    });
  }
  bool ended() const { return ended_.load(); }
  /// The exit reason's code, by name.
  std::string code() const { return std::string{to_string(code_.load())}; }

 private:
  std::atomic<bool> ended_{false};
  std::atomic<errc> code_{errc::none};
};

/// Destroys `sys` on another thread and runs `meanwhile` once its destructor has looked at
/// least 20 times whether anything can still wake the actors left, or once `watched` ended
/// (which the destructor should not have allowed). Returns when the destructor has.
void destroy_while(std::unique_ptr<actor_system> sys, const exit_record& watched,
                   const std::function<void()>& meanwhile) {
  auto* raw = sys.get();
  std::atomic<bool> destroyed{false};
  std::thread destroyer{[&] {
    sys.reset();
    destroyed = true;
  }};
  EXPECT_TRUE(eventually([&] { return watched.ended() || raw->shutdown_checks() >= 20; }));
  EXPECT_FALSE(watched.ended()) << "the destructor ended an actor that was still awaited";
  meanwhile();
  destroyer.join();
  EXPECT_TRUE(destroyed.load());
}

TEST(shutdown, waits_for_an_actor_awaiting_a_promise_that_another_thread_keeps) {
  troupe::promise<int> later;
  std::atomic<int> got{0};
  exit_record a_end;
  auto sys = std::make_unique<actor_system>(two_threads());
  {
    auto a = sys->spawn([&got, f = later.get_future()](event_based_actor* self) mutable {
      std::move(f).then([handle = self->self()](int x) { troupe::send(handle, x); });
      return behavior{[self, &got](int x) {
        got = x;
        self->quit();
      }};
    });
    a_end.watch(a);
  }
  destroy_while(std::move(sys), a_end, [&] { later.set_value(5); });
  EXPECT_EQ(got.load(), 5);
  EXPECT_TRUE(a_end.ended());
  EXPECT_EQ(a_end.code(), "none");
}

TEST(shutdown, waits_for_an_answer_that_a_handler_returned_as_a_future_of_a_promise) {
  troupe::promise<int> later;
  std::atomic<int> got{0};
  exit_record requester_end;
  auto sys = std::make_unique<actor_system>(two_threads());
  {
    auto answerer = sys->spawn([f = later.get_future().share()](int x) {
      return f.then(troupe::inline_execution, [x](int y) { return x + y; });
    });
    auto requester = sys->spawn([answerer, &got](event_based_actor* self) {
      self->request(answerer, 1).then([self, &got](int x) {
        got = x;
        self->quit();
      });
      return behavior{[](int) {}};
    });
    requester_end.watch(requester);
  }
  destroy_while(std::move(sys), requester_end, [&] { later.set_value(41); });
  EXPECT_EQ(got.load(), 42);
  EXPECT_EQ(requester_end.code(), "none");
}

TEST(shutdown, waits_for_a_handler_blocked_in_get) {
  troupe::promise<int> later;
  std::atomic<int> got{0};
  exit_record blocked_end;
  auto sys = std::make_unique<actor_system>(two_threads());
  {
    auto blocked = sys->spawn([&got, f = later.get_future().share()](event_based_actor* self) {
      troupe::send(self->self(), 0);
      return behavior{[self, &got, f](int) {
        got = f.get();
        self->quit();
      }};
    });
    blocked_end.watch(blocked);
  }
  destroy_while(std::move(sys), blocked_end, [&] { later.set_value(3); });
  EXPECT_EQ(got.load(), 3);
  EXPECT_EQ(blocked_end.code(), "none");
}

TEST(shutdown, waits_for_a_pending_timeout) {
  std::atomic<errc> got{errc::none};  // the requester's error
  exit_record requester_end;
  auto sys = std::make_unique<actor_system>(two_threads());
  {
    // Keeps every request's response promise and never answers.
    auto kept = std::make_shared<std::vector<troupe::response_promise>>();
    auto silent = sys->spawn([kept](event_based_actor* self) {
      return behavior{[self, kept](int) {
        kept->push_back(self->make_response_promise());
        return kept->back();
      }};
    });
    auto requester = sys->spawn([silent, &got](event_based_actor* self) {
      self->request(silent, 50ms, 1)
          .then([self](int) { self->quit(); },
                [self, &got](troupe::error& e) {
                  got = e.code();
                  self->quit();
                });
      return behavior{[silent](int) {}};  // a cycle: silent keeps this actor's promise
    });
    requester_end.watch(requester);
  }
  sys.reset();
  EXPECT_EQ(to_string(got.load()), "request_timeout");
  EXPECT_EQ(requester_end.code(), "none");
}

TEST(shutdown, ends_idle_actors_in_a_reference_cycle_with_user_shutdown) {
  exit_record a_end;
  exit_record b_end;
  auto sys = std::make_unique<actor_system>(two_threads());
  {
    auto a_handle = std::make_shared<actor>();
    auto b_handle = std::make_shared<actor>();
    auto a = sys->spawn([b_handle](int x) { return x + (*b_handle ? 1 : 0); });
    auto b = sys->spawn([a_handle](int x) { return x + (*a_handle ? 1 : 0); });
    *a_handle = a;  // each behavior holds the other actor
    *b_handle = b;
    EXPECT_EQ(troupe::request<int>(a, 1).get(), 2);
    a_end.watch(a);
    b_end.watch(b);
  }
  sys.reset();  // returns: nothing can wake the cycle
  EXPECT_EQ(a_end.code(), "user_shutdown");
  EXPECT_EQ(b_end.code(), "user_shutdown");
}

TEST(shutdown, ends_actors_waiting_for_an_actor_that_keeps_their_answers) {
  // The answers wait in the other actor's state, and each side holds the other: no promise,
  // nothing in flight, only actors that nothing wakes. Neither a response handler nor a
  // continuation on a request's future keeps the destructor waiting.
  exit_record handler_end;
  exit_record continuation_end;
  auto sys = std::make_unique<actor_system>(two_threads());
  {
    auto kept = std::make_shared<std::vector<troupe::response_promise>>();
    auto hoarder = sys->spawn([kept](event_based_actor* self) {
      return behavior{[self, kept](int) {
        kept->push_back(self->make_response_promise());
        return kept->back();
      }};
    });
    auto by_handler = sys->spawn([hoarder](event_based_actor* self) {
      self->request(hoarder, 1).then([](int) {}, [](troupe::error&) {});
      return behavior{[hoarder](int) {}};
    });
    auto by_continuation = sys->spawn([hoarder](event_based_actor* self) {
      troupe::request<int>(hoarder, 2).then([handle = self->self()](int) {});
      return behavior{[hoarder](int) {}};
    });
    handler_end.watch(by_handler);
    continuation_end.watch(by_continuation);
  }
  sys.reset();  // returns
  EXPECT_EQ(handler_end.code(), "user_shutdown");
  EXPECT_EQ(continuation_end.code(), "user_shutdown");
}

}  // namespace
