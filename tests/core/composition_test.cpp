// Composition b * a: input to a, a's result to b, b answers the original requester.
#include <gtest/gtest.h>

#include <string>

#include "test_config.hpp"
#include "troupe/troupe.hpp"

namespace {

using troupe::actor;
using troupe::actor_system;
using troupe::behavior;
using troupe::errc;
using troupe::event_based_actor;
using troupe::test::two_threads;

TEST(composition, two_stages_apply_right_to_left) {
  actor_system sys{two_threads()};
  auto add_one = sys.spawn([](int x) { return x + 1; });
  auto twice = sys.spawn([](int x) { return x * 2; });
  EXPECT_EQ(troupe::request<int>(twice * add_one, 5).get(), 12);
  EXPECT_EQ(troupe::request<int>(add_one * twice, 5).get(), 11);
}

TEST(composition, three_stages_change_types_along_the_way) {
  actor_system sys{two_threads()};
  auto parse = sys.spawn([](const std::string& s) { return std::stoi(s); });
  auto square = sys.spawn([](int x) { return x * x; });
  auto show = sys.spawn([](int x) { return "result=" + std::to_string(x); });
  auto pipeline = show * square * parse;
  EXPECT_EQ(troupe::request<std::string>(pipeline, std::string{"12"}).get(), "result=144");
}

TEST(composition, the_last_stage_answers_the_requester_not_the_first) {
  actor_system sys{two_threads()};
  auto first = sys.spawn([](event_based_actor* self) {
    return behavior{[self](int x) {
      // The requester is the original one, even though the result goes on to the next stage.
      EXPECT_TRUE(self->current_sender());
      return x + 1;
    }};
  });
  auto second = sys.spawn([](int x) { return x * 10; });
  troupe::scoped_actor self{sys};
  auto pipeline = second * first;
  EXPECT_EQ(self->request<int>(pipeline, 1).get(), 20);
}

TEST(composition, an_error_in_a_stage_goes_straight_to_the_requester) {
  actor_system sys{two_threads()};
  std::atomic<int> later_stage_runs{0};
  auto failing = sys.spawn([](int) -> int { throw std::runtime_error{"stage one failed"}; });
  auto later = sys.spawn([&](int x) {
    ++later_stage_runs;
    return x;
  });
  try {
    troupe::request<int>(later * failing, 1).get();
    FAIL() << "expected an error";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::unhandled_exception);
    EXPECT_NE(std::string{e.what()}.find("stage one failed"), std::string::npos);
  }
  EXPECT_EQ(later_stage_runs.load(), 0);
}

TEST(composition, delegation_and_promises_inside_a_stage_keep_the_pipeline) {
  actor_system sys{two_threads()};
  auto worker = sys.spawn([](int x) { return x + 100; });
  auto delegating = sys.spawn([worker](event_based_actor* self) {
    return behavior{[self, worker](int x) { return self->delegate(worker, x); }};
  });
  auto later = sys.spawn([](event_based_actor* self) {
    return behavior{[self](int x) {
      auto promise = self->make_response_promise();
      troupe::make_ready_future(x).then([promise](int v) mutable { promise.deliver(v * 2); });
      return promise;
    }};
  });
  EXPECT_EQ(troupe::request<int>(later * delegating, 1).get(), 202);
}

TEST(composition, a_dead_stage_fails_requests_and_ends_the_composition) {
  actor_system sys{two_threads()};
  auto a = sys.spawn([](int x) { return x; });
  auto b = sys.spawn([](int x) { return x; });
  auto composed = b * a;
  troupe::scoped_actor self{sys};
  composed->add_monitor(self.handle().address());
  troupe::send_exit(a, troupe::error{errc::kill, "stage removed"});
  self->receive([](const troupe::down_msg& down) { EXPECT_EQ(down.reason.code(), errc::kill); });
  try {
    troupe::request<int>(composed, 1).get();
    FAIL() << "expected an error";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::request_receiver_down);
  }
}

}  // namespace
