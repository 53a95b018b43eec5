// Actors: spawning, messaging, requests, state, behaviors, delegation, promises, registry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_config.hpp"
#include "troupe/troupe.hpp"

namespace {

using troupe::test::two_threads;
using namespace std::chrono_literals;
using troupe::actor;
using troupe::actor_system;
using troupe::behavior;
using troupe::errc;
using troupe::event_based_actor;

errc code_of(troupe::future<int> f) {
  try {
    f.get();
  } catch (const troupe::error& e) {
    return e.code();
  }
  return errc::none;
}

TEST(actor, lambda_actor_answers_requests) {
  actor_system sys{two_threads()};
  auto adder = sys.spawn([](int a, int b) { return a + b; });
  EXPECT_EQ(troupe::request<int>(adder, 1, 2).get(), 3);
  EXPECT_EQ(troupe::request<int>(adder, -5, 5).get(), 0);
}

TEST(actor, first_matching_handler_wins_and_void_handlers_answer_empty) {
  actor_system sys{two_threads()};
  std::atomic<int> pings{0};
  auto a = sys.spawn([&](event_based_actor*) {
    return behavior{[](int x) { return x * 2; }, [](const std::string& s) { return s + "!"; },
                    [&](double) { ++pings; }};
  });
  EXPECT_EQ(troupe::request<int>(a, 21).get(), 42);
  EXPECT_EQ(troupe::request<std::string>(a, std::string{"hi"}).get(), "hi!");
  troupe::request<void>(a, 1.5).get();
  EXPECT_EQ(pings.load(), 1);
}

class counter final : public event_based_actor {
 public:
  counter(actor_system& sys, int start) : event_based_actor(sys, "counter"), value_(start) {}
  behavior make_behavior() override {
    return {[this](const std::string& cmd) {
              if (cmd == "inc") ++value_;
              return value_;
            },
            [this](int delta) { return value_ += delta; }};
  }

 private:
  int value_;
};

TEST(actor, class_actor_keeps_state_between_messages) {
  actor_system sys{two_threads()};
  auto c = sys.spawn<counter>(10);
  for (int i = 0; i < 5; ++i) troupe::send(c, std::string{"inc"});
  EXPECT_EQ(troupe::request<int>(c, std::string{"get"}).get(), 15);
  EXPECT_EQ(troupe::request<int>(c, 5).get(), 20);
}

TEST(actor, messages_from_one_sender_arrive_in_order) {
  actor_system sys{two_threads()};
  auto log = std::make_shared<std::vector<int>>();
  auto a = sys.spawn([log](int x) { log->push_back(x); });
  for (int i = 0; i < 1000; ++i) troupe::send(a, i);
  troupe::request<void>(a, -1).get();
  ASSERT_EQ(log->size(), 1001u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ((*log)[i], i);
}

TEST(actor, become_and_unbecome_switch_behaviors) {
  actor_system sys{two_threads()};
  auto light = sys.spawn([](event_based_actor* self) {
    auto on = std::make_shared<behavior>();
    *on = behavior{[self](const std::string& cmd) {
      if (cmd == "off") self->unbecome();
      return std::string{"on"};
    }};
    return behavior{[self, on](const std::string& cmd) {
      if (cmd == "on") self->become(troupe::keep_behavior, *on);
      return std::string{"off"};
    }};
  });
  auto ask = [&](const char* cmd) {
    return troupe::request<std::string>(light, std::string{cmd}).get();
  };
  EXPECT_EQ(ask("status"), "off");
  EXPECT_EQ(ask("on"), "off");
  EXPECT_EQ(ask("status"), "on");
  EXPECT_EQ(ask("off"), "on");
  EXPECT_EQ(ask("status"), "off");
}

TEST(actor, request_inside_an_actor_does_not_block) {
  actor_system sys{two_threads()};
  auto square = sys.spawn([](int x) { return x * x; });
  auto front = sys.spawn([square](event_based_actor* self) {
    return behavior{[self, square](int x) {
      auto promise = self->make_response_promise();
      self->request(square, x).then([promise, x](int y) mutable { promise.deliver(y + x); });
      return promise;
    }};
  });
  EXPECT_EQ(troupe::request<int>(front, 7).get(), 56);
}

TEST(actor, delegation_lets_the_delegate_answer) {
  actor_system sys{two_threads()};
  auto worker = sys.spawn([](int x) { return x + 1000; });
  std::atomic<int> front_results{0};
  auto front = sys.spawn([worker, &front_results](event_based_actor* self) {
    return behavior{[self, worker, &front_results](int x) {
      ++front_results;
      return self->delegate(worker, x * 2);
    }};
  });
  EXPECT_EQ(troupe::request<int>(front, 1).get(), 1002);
  EXPECT_EQ(front_results.load(), 1);
}

TEST(actor, handler_returning_a_future_answers_when_it_is_ready) {
  actor_system sys{two_threads()};
  auto slow = std::make_shared<troupe::promise<int>>();
  auto a = sys.spawn([slow](int) { return slow->get_future(); });
  auto answer = troupe::request<int>(a, 0);
  EXPECT_EQ(answer.wait_for(20ms), std::future_status::timeout);
  slow->set_value(99);
  EXPECT_EQ(answer.get(), 99);
}

TEST(actor, forgotten_response_promise_fails_the_request) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](event_based_actor* self) {
    return behavior{[self](int) {
      auto dropped = self->make_response_promise();
      return dropped;  // returned, then destroyed without a delivery
    }};
  });
  EXPECT_EQ(code_of(troupe::request<int>(a, 1)), errc::broken_promise);
}

TEST(actor, unmatched_request_gets_unexpected_message_naming_the_types) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](int x) { return x; });
  try {
    troupe::request<int>(a, std::string{"not an int"}).get();
    FAIL() << "expected an error";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::unexpected_message);
    EXPECT_NE(std::string{e.what()}.find("(std::string)"), std::string::npos) << e.what();
  }
}

TEST(actor, response_of_the_wrong_type_is_reported) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](int x) { return std::to_string(x); });
  EXPECT_EQ(code_of(troupe::request<int>(a, 1)), errc::unexpected_response);
}

TEST(actor, registry_finds_actors_by_name_until_they_end) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](int x) { return x; });
  sys.registry().put("echo", a);
  EXPECT_EQ(sys.registry().get("echo"), a);
  EXPECT_FALSE(sys.registry().get("nobody"));
  EXPECT_THROW(sys.registry().put("empty", actor{}), troupe::error);
  troupe::scoped_actor self{sys};
  a->add_monitor(self.handle().address());  // after put: told after the registry was
  troupe::send_exit(a, troupe::error{errc::kill, "test"});
  ASSERT_TRUE(self->receive_for(30s, [](const troupe::down_msg&) {})) << "the actor did not end";
  EXPECT_FALSE(sys.registry().get("echo"));
}

TEST(scoped_actor, sends_and_receives_from_main) {
  actor_system sys{two_threads()};
  auto echo = sys.spawn([](event_based_actor* self) {
    return behavior{[self](int x) { self->send(self->current_sender(), x, std::string{"echo"}); }};
  });
  troupe::scoped_actor self{sys};
  self->send(echo, 5);
  int got = 0;
  self->receive([&](int x, const std::string& tag) {
    got = x;
    EXPECT_EQ(tag, "echo");
  });
  EXPECT_EQ(got, 5);
  EXPECT_FALSE(self->receive_for(10ms, [](int, const std::string&) {}));
  EXPECT_EQ(self->request<int>(sys.spawn([](int x) { return -x; }), 3).get(), -3);
}

TEST(scoped_actor, unmatched_messages_wait_for_a_later_receive) {
  actor_system sys{two_threads()};
  troupe::scoped_actor self{sys};
  troupe::send(self.handle(), std::string{"first"});
  troupe::send(self.handle(), 2);
  int number = 0;
  std::string text;
  self->receive([&](int x) { number = x; });
  self->receive([&](const std::string& s) { text = s; });
  EXPECT_EQ(number, 2);
  EXPECT_EQ(text, "first");
}

TEST(scheduler, blocking_get_inside_a_handler_does_not_deadlock_one_worker) {
  troupe::config cfg;
  cfg.threads = 1;
  actor_system sys{cfg};
  auto inner = sys.spawn([](int x) { return x + 1; });
  auto outer = sys.spawn([inner](int x) { return troupe::request<int>(inner, x).get() * 2; });
  EXPECT_EQ(troupe::request<int>(outer, 4).get(), 10);
}

TEST(scheduler, continuations_of_system_futures_run_on_workers) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](int x) { return x; });
  auto main_id = std::this_thread::get_id();
  auto f = troupe::request<int>(a, 1).then([main_id](int x) {
    EXPECT_NE(std::this_thread::get_id(), main_id);
    return x + 1;
  });
  EXPECT_EQ(f.get(), 2);
}

}  // namespace
