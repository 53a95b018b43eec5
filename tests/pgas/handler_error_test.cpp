// A handler that throws: the job goes on, every other message is processed, termination still
// completes, and every PE learns of the failure at the same call (wait(), barrier(), a
// finished() future, or the next collective), the failing PE with the handler's own message.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "troupe/pgas.hpp"

namespace pgas = troupe::pgas;

namespace {

// What `call` threw as a troupe::error; fails the test if it threw nothing.
template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const troupe::error& failure) {
    EXPECT_EQ(failure.code(), troupe::errc::unhandled_exception) << failure.what();
    return failure.what();
  }
  ADD_FAILURE() << "expected a troupe::error for a handler that threw";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// The case: one PE's handler throws for one message. wait() ends on every PE, the
// failing PE gets the handler's error, the others an error naming that PE, and every other
// message was processed: per PE n * messages arrive, values 0..messages-1 from each sender.
TEST(pgas_handler_error, one_throw_fails_wait_everywhere_and_the_rest_is_processed) {
  pgas::world world{pgas::world_options{.buffer_bytes = 256}};  // small: many buffers
  const int n = world.npes();
  const int failing = n - 1;
  const std::int64_t messages = 1000;
  std::int64_t received = 0;
  std::int64_t sum = 0;
  pgas::actor<std::int64_t> actor{world, [&](std::int64_t value, int from) {
                                    if (world.pe() == failing && from == 0 && value == 42)
                                      throw std::runtime_error("the answer is not welcome here");
                                    ++received;
                                    sum += value;
                                  }};
  for (std::int64_t value = 0; value < messages; ++value)
    for (int pe = 0; pe < n; ++pe) actor.send(pe, value);
  actor.done();
  const std::string what = error_of([&] { actor.wait(); });
  EXPECT_TRUE(actor.terminated());
  const bool here = world.pe() == failing;
  EXPECT_EQ(received, n * messages - (here ? 1 : 0));
  EXPECT_EQ(sum, n * messages * (messages - 1) / 2 - (here ? 42 : 0));
  if (here) {
    EXPECT_TRUE(contains(what, "actor 0, mailbox 0, PE " + std::to_string(failing))) << what;
    EXPECT_TRUE(contains(what, "threw on a message from PE 0: the answer is not welcome here"))
        << what;
  } else {
    EXPECT_TRUE(contains(
        what, "actor 0: a handler threw on PE " + std::to_string(failing) + " (mailbox 0)"))
        << what;
  }
  EXPECT_TRUE(contains(what, here ? "1 handler call threw on this PE, 1 in all, on 1 PE"
                                  : "1 handler call threw in all, on 1 PE"))
      << what;
  // Reported once: wait() again says the same, the barrier and collectives go on.
  EXPECT_EQ(error_of([&] { actor.wait(); }), what);
  world.barrier();
  EXPECT_EQ(world.all_reduce(1), n);
}

// Through a graph and world::barrier(): mailbox 0 forwards to mailbox 1 except for one message
// on PE 0 (every PE sends every value to every PE); mailbox 1 becomes done by itself all the same,
// the barrier ends on every PE with the error, and a finished() future holds it too.
TEST(pgas_handler_error, a_throw_before_a_forward_still_terminates_the_graph) {
  pgas::world world{pgas::world_options{.buffer_bytes = 128}};
  const int n = world.npes();
  const int messages = 200;
  std::int64_t forwarded = 0;
  pgas::selector<2, int>* self = nullptr;
  pgas::selector<2, int> chain{world,
                               {[&](int value, int from) {
                                  if (world.pe() == 0 && from == n - 1 && value == 7)
                                    throw troupe::error(troupe::errc::invalid_argument,
                                                        "seven is not forwarded");
                                  self->send(1, (world.pe() + 1) % n, value);
                                },
                                [&](int, int) { ++forwarded; }}};
  self = &chain;
  auto finished = chain.finished();
  for (int value = 0; value < messages; ++value)
    for (int pe = 0; pe < n; ++pe) chain.send(0, pe, value);
  chain.done();
  const std::string what = error_of([&] { world.barrier(); });
  EXPECT_TRUE(chain.terminated());
  ASSERT_TRUE(finished.is_ready());
  EXPECT_EQ(error_of([&] { finished.get(); }), what);
  // Every message but one was forwarded, once.
  EXPECT_EQ(world.all_reduce(forwarded), std::int64_t{n} * n * messages - 1);
  const std::string expected =
      world.pe() == 0 ? "selector 0, mailbox 0, PE 0: a handler threw on a message from PE " +
                            std::to_string(n - 1) + ": seven is not forwarded"
                      : "selector 0: a handler threw on PE 0 (mailbox 0)";
  EXPECT_TRUE(contains(what, expected)) << what;
  world.barrier();  // reported already: this one goes through
}

// Lambdas run in blocks; one that throws in the middle of a block leaves the rest of the block
// to run. Every PE throws twice here; the selector is left without wait(), so the next
// collective reports it, once.
TEST(pgas_handler_error, throws_inside_a_block_of_lambdas_on_every_pe_reach_the_next_collective) {
  pgas::world world;
  const int n = world.npes();
  struct state {
    std::int64_t ran = 0;
  } mine;
  using actor_type = pgas::lambda_actor<state>;
  const std::int64_t messages = 1200;  // a multiple of 2, 3 and 4 PEs
  {
    actor_type actor{world, mine};
    for (std::int64_t sequence = 0; sequence < messages; ++sequence)
      actor.send(static_cast<int>(sequence % n), [sequence](state& s, actor_type::context& at) {
        if (at.from() == 0 && (sequence / at.npes() == 7 || sequence / at.npes() == 9))
          throw std::out_of_range("sequence " + std::to_string(sequence));
        ++s.ran;
      });
  }  // leaving scope: done() and termination, the failure kept for the world
  const std::string what = error_of([&] { world.all_reduce(1); });
  EXPECT_TRUE(contains(what, "lambda_actor 0, mailbox 0, PE " + std::to_string(world.pe()) +
                                 ": a handler threw on a message from PE 0: sequence " +
                                 std::to_string(7 * n + world.pe())))
      << what;
  EXPECT_TRUE(contains(what, "2 handler calls threw on this PE, " + std::to_string(2 * n) +
                                 " in all, on " + std::to_string(n) + " PEs"))
      << what;
  // Every PE sent messages / n lambdas to each PE; two of PE 0's threw on each.
  EXPECT_EQ(mine.ran, messages - 2);
  EXPECT_EQ(world.all_reduce(mine.ran), n * (messages - 2));
}

// A get_nbi callback that throws fails quiet() on every PE; the array stays usable.
TEST(pgas_handler_error, a_throwing_get_callback_fails_quiet_and_the_array_goes_on) {
  pgas::world world;
  const int n = world.npes();
  pgas::symmetric_array<std::int64_t> array{world, 4};
  for (std::size_t l = 0; l < array.local().size(); ++l)
    array.local()[l] = static_cast<std::int64_t>(l * static_cast<std::size_t>(n)) + world.pe();
  std::vector<std::int64_t> got(array.size(), -1);
  for (std::size_t g = 0; g < array.size(); ++g)
    array.get_nbi(g, [&got, &world, g](std::int64_t value) {
      if (world.pe() == 1 && g == 2) throw std::runtime_error("no element 2 here");
      got[g] = value;
    });
  const std::string what = error_of([&] { array.quiet(); });
  EXPECT_TRUE(contains(what, world.pe() == 1 ? "no element 2 here" : "threw on PE 1")) << what;
  for (std::size_t g = 0; g < array.size(); ++g)
    EXPECT_EQ(got[g], world.pe() == 1 && g == 2 ? -1 : static_cast<std::int64_t>(g));
  array.atomic_add(0, 1);
  array.quiet();
  if (world.pe() == 0) {
    EXPECT_EQ(array.local()[0], n);
  }
}
