// Default handlers: what an actor does with a message that none of its handlers matches.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

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
using troupe::message;
namespace handlers = troupe::default_handlers;

/// Sends an int back to its sender (also for a plain send) and takes nothing else; `handler`
/// decides about the rest (the system's default if empty). Named, so that its description is
/// known.
class int_echo final : public event_based_actor {
 public:
  explicit int_echo(actor_system& sys, troupe::default_handler handler = {})
      : event_based_actor(sys, "int_echo") {
    set_default_handler(std::move(handler));
  }
  behavior make_behavior() override {
    return {[](int x) { return x; }};
  }
};

/// Sends `x` from `self` to `echo` and returns what came back, if anything did within 30 s.
/// Messages from one sender arrive in order: once it is back, what `self` sent before was
/// handled.
std::optional<int> round_trip(troupe::scoped_actor& self, const actor& echo, int x) {
  self->send(echo, x);
  std::optional<int> back;
  self->receive_for(30s, [&](int y) { back = y; });
  return back;
}

TEST(default_handler, print_and_drop_is_the_default_and_names_the_actor_the_types_and_sender) {
  actor_system sys{two_threads()};
  auto echo = sys.spawn<int_echo>();
  troupe::scoped_actor self{sys};
  testing::internal::CaptureStderr();
  self->send(echo, std::string{"no handler takes this"}, 2.5);
  auto back = round_trip(self, echo, 7);
  auto printed = testing::internal::GetCapturedStderr();
  ASSERT_EQ(back, 7) << "the actor did not go on after the unmatched message";
  EXPECT_NE(printed.find(echo->description()), std::string::npos) << printed;
  EXPECT_NE(printed.find("(std::string, double)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("from " + self.handle()->description()), std::string::npos) << printed;
  EXPECT_EQ(printed.find('\n'), printed.size() - 1) << "expected one line: " << printed;
  EXPECT_EQ(self->mailbox_size(), 0u) << "the dropped message came back";
}

TEST(default_handler, drop_leaves_no_trace_and_the_actor_goes_on) {
  actor_system sys{two_threads()};
  auto echo = sys.spawn<int_echo>(handlers::drop);
  troupe::scoped_actor self{sys};
  testing::internal::CaptureStderr();
  self->send(echo, std::string{"dropped"});
  auto back = round_trip(self, echo, 7);
  auto printed = testing::internal::GetCapturedStderr();
  ASSERT_EQ(back, 7) << "the actor did not go on after the unmatched message";
  EXPECT_EQ(printed, "");
  EXPECT_EQ(self->mailbox_size(), 0u) << "the dropped message came back";
}

TEST(default_handler, reflect_sends_the_message_back_as_it_came_and_the_actor_goes_on) {
  actor_system sys{two_threads()};
  auto echo = sys.spawn<int_echo>(handlers::reflect);
  troupe::scoped_actor self{sys};
  self->send(echo, std::string{"hello"}, 2.5);
  std::optional<std::pair<std::string, double>> reflected;
  self->receive_for(30s, [&](const std::string& text, double x) { reflected.emplace(text, x); });
  ASSERT_TRUE(reflected) << "nothing came back";
  EXPECT_EQ(reflected->first, "hello");
  EXPECT_EQ(reflected->second, 2.5);
  EXPECT_EQ(round_trip(self, echo, 7), 7) << "the actor did not go on";
  EXPECT_EQ(self->mailbox_size(), 0u);
}

TEST(default_handler, reflect_and_quit_sends_the_message_back_and_ends_the_actor_saying_why) {
  actor_system sys{two_threads()};
  auto echo = sys.spawn<int_echo>(handlers::reflect_and_quit);
  troupe::scoped_actor self{sys};
  echo->add_monitor(self.handle().address());
  self->send(echo, std::string{"bye"});
  std::string reflected;
  ASSERT_TRUE(self->receive_for(30s, [&](const std::string& text) { reflected = text; }));
  EXPECT_EQ(reflected, "bye");
  troupe::error reason;
  ASSERT_TRUE(self->receive_for(30s, [&](const down_msg& down) { reason = down.reason; }));
  EXPECT_EQ(reason.code(), errc::unexpected_message) << reason.what();
  const std::string why = reason.what();
  EXPECT_NE(why.find(echo->description()), std::string::npos) << why;
  EXPECT_NE(why.find("(std::string)"), std::string::npos) << why;
  EXPECT_NE(why.find(self.handle()->description()), std::string::npos) << why;
  try {
    troupe::request<int>(echo, 1).get();
    FAIL() << "a request to the ended actor was answered";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::request_receiver_down) << e.what();
  }
}

TEST(default_handler, one_of_ones_own_gets_the_actor_and_the_message_and_its_result_goes_back) {
  actor_system sys{two_threads()};
  auto echo = sys.spawn<int_echo>([](event_based_actor* self, message& content) {
    return troupe::make_message(self->description() + " got " + content.type_names());
  });
  troupe::scoped_actor self{sys};
  self->send(echo, 2.5);
  std::string answer;
  ASSERT_TRUE(self->receive_for(30s, [&](const std::string& text) { answer = text; }));
  EXPECT_EQ(answer, echo->description() + " got (double)");
}

TEST(default_handler, the_systems_applies_unless_an_actor_sets_its_own_or_empties_it_again) {
  auto cfg = two_threads();
  cfg.default_handler = handlers::reflect;
  actor_system sys{cfg};
  auto reflecting = sys.spawn<int_echo>();  // the system's
  auto dropping = sys.spawn<int_echo>(handlers::drop);
  // Drops until it gets 0, then goes back to the system's.
  auto switching = sys.spawn([](event_based_actor* self) {
    self->set_default_handler(handlers::drop);
    return behavior{[self](int x) {
      if (x == 0) self->set_default_handler({});
      return x;
    }};
  });
  troupe::scoped_actor self{sys};
  int came_back = 0;
  auto count_reflected = [&](const std::string&) { ++came_back; };

  self->send(reflecting, std::string{"from reflecting"});
  ASSERT_TRUE(self->receive_for(30s, count_reflected));
  self->send(dropping, std::string{"from dropping"});
  ASSERT_EQ(round_trip(self, dropping, 1), 1);
  self->send(switching, std::string{"from switching, dropped"});
  ASSERT_EQ(round_trip(self, switching, 0), 0);
  self->send(switching, std::string{"from switching, reflected"});
  ASSERT_TRUE(self->receive_for(30s, count_reflected));
  EXPECT_EQ(came_back, 2);
  EXPECT_EQ(self->mailbox_size(), 0u);
}

TEST(default_handler, an_empty_one_in_the_config_is_refused) {
  auto cfg = two_threads();
  cfg.default_handler = nullptr;
  try {
    actor_system sys{cfg};
    FAIL() << "an actor system took an empty default handler";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string{e.what()}.find("config::default_handler"), std::string::npos) << e.what();
  }
}

TEST(default_handler, an_unmatched_request_gets_an_error_whatever_handles_unmatched_messages) {
  actor_system sys{two_threads()};
  troupe::default_handler own = [](event_based_actor*, message& content) { return content; };
  for (const auto& handler :
       {troupe::default_handler{handlers::drop}, troupe::default_handler{handlers::print_and_drop},
        troupe::default_handler{handlers::reflect},
        troupe::default_handler{handlers::reflect_and_quit}, own}) {
    auto echo = sys.spawn<int_echo>(handler);
    testing::internal::CaptureStderr();
    try {
      troupe::request<int>(echo, 30s, std::string{"not an int"}).get();
      ADD_FAILURE() << "expected an error";
    } catch (const troupe::error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), errc::unexpected_message) << what;
      EXPECT_NE(what.find(echo->description()), std::string::npos) << what;
      EXPECT_NE(what.find("(std::string)"), std::string::npos) << what;
    }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "the requester was told; why print";
    // The default handler did not run: reflect_and_quit's actor goes on, too.
    EXPECT_EQ(troupe::request<int>(echo, 30s, 5).get(), 5);
  }
}

}  // namespace
