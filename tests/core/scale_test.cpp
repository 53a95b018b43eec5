// Scale: a million actors spawned and finished, a skynet tree, with exact results and (under
// AddressSanitizer) no leak.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "troupe/troupe.hpp"

namespace {

using troupe::actor;
using troupe::actor_system;
using troupe::behavior;
using troupe::event_based_actor;

TEST(scale, a_million_actors_each_handle_one_message_and_end) {
  constexpr std::int64_t count = 1'000'000;
  std::atomic<std::int64_t> sum{0};
  {
    actor_system sys{troupe::config{}};
    for (std::int64_t i = 0; i < count; ++i) {
      auto a = sys.spawn([&sum](event_based_actor* self) {
        return behavior{[self, &sum](std::int64_t x) {
          sum.fetch_add(x, std::memory_order_relaxed);
          self->quit();
        }};
      });
      troupe::send(a, i);
    }
  }  // the destructor waits for all of them
  EXPECT_EQ(sum.load(), count * (count - 1) / 2);
}

behavior skynet_node(event_based_actor* self, actor parent, std::int64_t first, std::int64_t size) {
  if (size == 1) {
    self->send(parent, first);
    return {};
  }
  auto step = size / 10;
  for (std::int64_t i = 0; i < 10; ++i)
    self->spawn(skynet_node, self->self(), first + i * step, step);
  auto received = std::make_shared<int>(0);
  auto total = std::make_shared<std::int64_t>(0);
  return {[self, parent, received, total](std::int64_t part) {
    *total += part;
    if (++*received == 10) {
      self->send(parent, *total);
      self->quit();
    }
  }};
}

TEST(scale, skynet_of_a_hundred_thousand_actors_sums_exactly) {
  constexpr std::int64_t leaves = 100'000;
  actor_system sys{troupe::config{}};
  troupe::scoped_actor self{sys};
  sys.spawn(skynet_node, self.handle(), std::int64_t{0}, leaves);
  std::int64_t result = -1;
  self->receive([&](std::int64_t total) { result = total; });
  EXPECT_EQ(result, leaves * (leaves - 1) / 2);
  sys.await_all_actors_done();  // the root answers before it ends: wait, do not race it
  EXPECT_EQ(sys.running_actors(), 0u);
}

}  // namespace
