// Failure: exceptions, dead actors, timeouts, monitors, links, exit reasons, shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "test_config.hpp"
#include "troupe/troupe.hpp"

namespace {

using troupe::test::two_threads;
using namespace std::chrono_literals;
using troupe::actor;
using troupe::actor_system;
using troupe::behavior;
using troupe::down_msg;
using troupe::errc;
using troupe::event_based_actor;
using troupe::exit_msg;

/// An actor that takes every request's response promise and never answers.
actor spawn_hoarder(actor_system& sys) {
  auto kept = std::make_shared<std::vector<troupe::response_promise>>();
  return sys.spawn([kept](event_based_actor* self) {
    return behavior{[self, kept](int) {
      kept->push_back(self->make_response_promise());
      return kept->back();
    }};
  });
}

template <class T>
troupe::error error_of(troupe::future<T> f) {
  try {
    f.get();
  } catch (const troupe::error& e) {
    return e;
  }
  return {};
}

TEST(failure, exception_in_a_handler_ends_only_that_actor_and_reaches_monitors) {
  actor_system sys{two_threads()};
  auto fragile = sys.spawn([](int x) -> int {
    if (x < 0) throw std::invalid_argument{"negative input"};
    return x;
  });
  auto bystander = sys.spawn([](int x) { return x; });
  troupe::scoped_actor observer{sys};
  observer->send(sys.spawn([fragile](event_based_actor* self) {
    self->monitor(fragile);
    self->set_down_handler([self](down_msg& down) { self->quit(down.reason); });
    return behavior{[](int) {}};
  }),
                 0);

  auto failure = error_of(troupe::request<int>(fragile, -1));
  EXPECT_EQ(failure.code(), errc::unhandled_exception);
  EXPECT_NE(std::string{failure.what()}.find("negative input"), std::string::npos);
  EXPECT_EQ(troupe::request<int>(bystander, 7).get(), 7);

  // A monitor from main sees the same reason.
  troupe::scoped_actor self{sys};
  fragile->add_monitor(self.handle().address());
  self->receive([&](const down_msg& down) {
    EXPECT_EQ(down.source.id(), fragile.id());
    EXPECT_EQ(down.reason.code(), errc::unhandled_exception);
  });
}

TEST(failure, request_to_a_dead_actor_fails_at_once) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](int x) { return x; });
  troupe::send_exit(a, troupe::error{errc::kill, "stopped by the test"});
  troupe::scoped_actor self{sys};
  a->add_monitor(self.handle().address());
  self->receive([](const down_msg&) {});
  auto failure = error_of(troupe::request<int>(a, 1));
  EXPECT_EQ(failure.code(), errc::request_receiver_down);
  EXPECT_NE(std::string{failure.what()}.find("stopped by the test"), std::string::npos);
  EXPECT_TRUE(troupe::request<int>(a, 1).is_ready());  // answered inside request()
}

TEST(failure, queued_requests_fail_when_their_receiver_quits) {
  actor_system sys{two_threads()};
  auto a =
      sys.spawn([](event_based_actor* self) { return behavior{[self](int) { self->quit(); }}; });
  std::vector<troupe::future<int>> pending;
  for (int i = 0; i < 10; ++i) pending.push_back(troupe::request<int>(a, i));
  int failed = 0;
  for (auto& f : pending) {
    auto e = error_of(std::move(f));
    if (e.code() == errc::request_receiver_down || e.code() == errc::unexpected_response) ++failed;
  }
  EXPECT_EQ(failed, 10);  // the first got an empty (void) answer, the rest a dead receiver
}

TEST(failure, outside_request_times_out) {
  actor_system sys{two_threads()};
  auto hoarder = spawn_hoarder(sys);
  auto failure = error_of(troupe::request<int>(hoarder, 20ms, 1));
  EXPECT_EQ(failure.code(), errc::request_timeout);
  EXPECT_NE(std::string{failure.what()}.find("timed out"), std::string::npos);
}

TEST(failure, request_inside_an_actor_times_out_into_its_error_handler) {
  actor_system sys{two_threads()};
  auto hoarder = spawn_hoarder(sys);
  auto asker = sys.spawn([hoarder](event_based_actor* self) {
    return behavior{[self, hoarder](int x) {
      auto promise = self->make_response_promise();
      self->request(hoarder, 10ms, x)
          .then([promise](int) mutable { promise.deliver(std::string{"answered"}); },
                [promise](troupe::error& e) mutable {
                  promise.deliver(std::string{troupe::to_string(e.code())});
                });
      return promise;
    }};
  });
  EXPECT_EQ(troupe::request<std::string>(asker, 1).get(), "request_timeout");
}

TEST(failure, request_error_without_handler_ends_the_requester) {
  actor_system sys{two_threads()};
  auto thrower = sys.spawn([](int) -> int { throw std::runtime_error{"inner failure"}; });
  auto asker = sys.spawn([thrower](event_based_actor* self) {
    self->request(thrower, 1).then([](int) {});
    return behavior{[](const std::string&) {}};
  });
  troupe::scoped_actor self{sys};
  asker->add_monitor(self.handle().address());
  self->receive([](const down_msg& down) {
    EXPECT_EQ(down.reason.code(), errc::unhandled_exception);
    EXPECT_NE(std::string{down.reason.what()}.find("inner failure"), std::string::npos);
  });
}

TEST(failure, links_propagate_abnormal_exits_and_can_be_trapped) {
  actor_system sys{two_threads()};
  troupe::scoped_actor self{sys};
  auto trapped = std::make_shared<std::atomic<int>>(0);
  auto leader = sys.spawn([](int x) -> int {
    if (x == 0) throw std::runtime_error{"leader failed"};
    return x;
  });
  auto follower = sys.spawn([leader](event_based_actor* me) {
    me->link_to(leader);
    return behavior{[](int x) { return x; }};
  });
  // The trapper reports its exit message: it may arrive after the follower's down message.
  auto trapper = sys.spawn([leader, trapped, observer = self.handle()](event_based_actor* me) {
    me->link_to(leader);
    me->set_exit_handler([me, trapped, observer](exit_msg& msg) {
      if (msg.reason.code() == errc::unhandled_exception) ++*trapped;
      me->send(observer, std::string{"trapped"});
    });
    return behavior{[](int x) { return x; }};
  });
  EXPECT_EQ(troupe::request<int>(follower, 1).get(), 1);
  follower->add_monitor(self.handle().address());
  troupe::send(leader, 0);
  self->receive([](const down_msg& down) {
    EXPECT_EQ(down.reason.code(), errc::unhandled_exception);  // took the leader's reason
  });
  self->receive([](const std::string& report) { EXPECT_EQ(report, "trapped"); });
  EXPECT_EQ(troupe::request<int>(trapper, 5).get(), 5);  // the trapper lives on
  EXPECT_EQ(trapped->load(), 1);
}

TEST(failure, normal_exit_does_not_propagate_but_kill_cannot_be_trapped) {
  actor_system sys{two_threads()};
  auto quitter =
      sys.spawn([](event_based_actor* self) { return behavior{[self](int) { self->quit(); }}; });
  auto linked = sys.spawn([quitter](event_based_actor* self) {
    self->link_to(quitter);
    self->set_exit_handler([](exit_msg&) {});
    return behavior{[](int x) { return x; }};
  });
  troupe::send(quitter, 1);
  EXPECT_EQ(troupe::request<int>(linked, 2).get(), 2);
  troupe::scoped_actor self{sys};
  linked->add_monitor(self.handle().address());
  troupe::send_exit(linked, troupe::error{errc::kill, "no way out"});
  self->receive([](const down_msg& down) { EXPECT_EQ(down.reason.code(), errc::kill); });
}

TEST(failure, monitoring_a_dead_actor_delivers_down_at_once) {
  actor_system sys{two_threads()};
  auto a =
      sys.spawn([](event_based_actor* self) { return behavior{[self](int) { self->quit(); }}; });
  troupe::scoped_actor self{sys};
  a->add_monitor(self.handle().address());
  troupe::request<void>(a, 1).get();
  // The first monitor's down message says that the actor has ended.
  ASSERT_TRUE(self->receive_for(30s, [](const down_msg& down) { EXPECT_FALSE(down.reason); }));
  ASSERT_TRUE(a->is_terminated());
  // A monitor added now gets its down message within add_monitor, before it returns.
  a->add_monitor(self.handle().address());
  ASSERT_EQ(self->mailbox_size(), 1u);
  EXPECT_TRUE(self->receive_for(0s, [&](const down_msg& down) {
    EXPECT_FALSE(down.reason);
    EXPECT_EQ(down.source, a.address());
  }));
}

TEST(failure, unreferenced_actors_end_as_unreachable) {
  actor_system sys{two_threads()};
  troupe::scoped_actor self{sys};
  {
    auto a = sys.spawn([](int x) { return x; });
    a->add_monitor(self.handle().address());
  }
  self->receive([](const down_msg& down) { EXPECT_EQ(down.reason.code(), errc::unreachable); });
}

TEST(failure, shutdown_ends_actors_that_keep_each_other_alive) {
  auto sys = std::make_unique<actor_system>(two_threads());
  auto a_handle = std::make_shared<actor>();
  auto b_handle = std::make_shared<actor>();
  auto a = sys->spawn([b_handle](int x) { return x + (*b_handle ? 1 : 0); });
  auto b = sys->spawn([a_handle](int x) { return x + (*a_handle ? 1 : 0); });
  *a_handle = a;  // a cycle: each behavior holds the other actor
  *b_handle = b;
  EXPECT_EQ(troupe::request<int>(a, 1).get(), 2);
  a_handle.reset();
  b_handle.reset();
  a = b = actor{};
  EXPECT_EQ(sys->running_actors(), 2u);
  sys.reset();  // must return: the cycle is ended with user_shutdown
}

TEST(failure, empty_handles_are_reported) {
  actor_system sys{two_threads()};
  EXPECT_EQ(error_of(troupe::request<int>(actor{}, 1)).code(), errc::invalid_argument);
  EXPECT_THROW(actor{} * actor{}, troupe::error);
}

}  // namespace
