#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "troupe/pgas.hpp"

namespace pgas = troupe::pgas;

namespace {

// Deterministic per (seed, PE), so that each PE can recompute what another one sent.
std::mt19937_64 stream_of(int pe, std::uint64_t seed = 12345) {
  return std::mt19937_64{seed * 1000003u + static_cast<std::uint64_t>(pe)};
}

template <class F>
void expect_error(F&& call, troupe::errc code, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const troupe::error& failure) {
    EXPECT_EQ(failure.code(), code) << failure.what();
    EXPECT_NE(std::string(failure.what()).find(needle), std::string::npos) << failure.what();
  }
}

// Lambdas with data: what a PE knows of the spans it received and the echoes of those it sent.
struct span_state {
  std::vector<std::int64_t> next_from;       // per sender: the sequence number expected next
  std::vector<std::int64_t> last_echo_from;  // per echoing PE: the last sequence number echoed
  std::int64_t echoes = 0;
  std::int64_t wrong = 0;
};
using span_actor = pgas::lambda_actor<span_state>;

struct odd_pair {  // 4-byte aligned, with padding
  std::int32_t a;
  std::int16_t b;
};

// Element `index` of the span that PE `from` sends as message `sequence`.
template <class T>
T element(int from, std::int64_t sequence, std::size_t index) {
  const std::int64_t seed = from * 1'000'003 + sequence * 131 + static_cast<std::int64_t>(index);
  if constexpr (std::is_same_v<T, odd_pair>)
    return {static_cast<std::int32_t>(seed), static_cast<std::int16_t>(-seed)};
  else
    return static_cast<T>(seed);
}

template <class T>
bool intact(std::span<const T> data, int from, std::int64_t sequence, std::size_t length) {
  if (data.size() != length || reinterpret_cast<std::uintptr_t>(data.data()) % alignof(T) != 0)
    return false;
  for (std::size_t i = 0; i < length; ++i) {
    const T expected = element<T>(from, sequence, i);
    if constexpr (std::is_same_v<T, odd_pair>) {
      if (data[i].a != expected.a || data[i].b != expected.b) return false;
    } else if (data[i] != expected) {
      return false;
    }
  }
  return true;
}

// Runs at the sender of message `sequence`, sent back by its receiver from a handler.
template <class T>
struct echo {
  std::int64_t sequence;
  std::size_t length;
  void operator()(span_state& s, std::span<const T> data, span_actor::context& at) const {
    auto& last = s.last_echo_from[static_cast<std::size_t>(at.from())];
    s.wrong += sequence <= last;
    last = sequence;
    s.wrong += !intact(data, at.pe(), sequence, length);
    ++s.echoes;
  }
};

// Runs at the receiver: checks the message's place and elements, and echoes some back, from
// the receive buffer.
template <class T>
struct check {
  std::int64_t sequence;
  std::size_t length;
  bool echoed;
  void operator()(span_state& s, std::span<const T> data, span_actor::context& at) const {
    auto& next = s.next_from[static_cast<std::size_t>(at.from())];
    s.wrong += sequence != next;
    next = sequence + 1;
    s.wrong += !intact(data, at.from(), sequence, length);
    if (echoed) at.send(at.from(), data, echo<T>{sequence, length});
  }
};

// Message `sequence` to `pe`: a span of 0, 1, 37 or as many elements as fit, passed as a span
// or as the vector itself.
template <class T>
void send_checked(span_actor& actor, int pe, int me, std::int64_t sequence) {
  const bool echoed = sequence % 3 == 0;
  const std::size_t lengths[] = {0, 1, 37, actor.max_elements<T>(check<T>{sequence, 0, echoed})};
  const std::size_t length = lengths[sequence / 4 % 4];
  std::vector<T> data(length);
  for (std::size_t i = 0; i < length; ++i) data[i] = element<T>(me, sequence, i);
  if (sequence / 16 % 2 == 0)
    actor.send(pe, std::span<const T>(data), check<T>{sequence, length, echoed});
  else
    actor.send(pe, data, check<T>{sequence, length, echoed});
}

}  // namespace

TEST(pgas_world, collectives_match_closed_forms) {
  pgas::world world;
  const int n = world.npes();
  const int me = world.pe();
  EXPECT_EQ(world.all_reduce(me + 1), n * (n + 1) / 2);
  EXPECT_EQ(world.all_reduce(static_cast<double>(me), pgas::world::reduction::max), n - 1);
  EXPECT_EQ(world.all_reduce(std::int64_t{me}, pgas::world::reduction::min), 0);
  std::vector<std::uint64_t> mine{1, static_cast<std::uint64_t>(me)};
  auto summed = world.all_reduce(std::span<const std::uint64_t>(mine));
  EXPECT_EQ(summed[0], static_cast<std::uint64_t>(n));
  EXPECT_EQ(summed[1], static_cast<std::uint64_t>(n * (n - 1) / 2));
  // PE i sends i*100 + j to PE j.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) counts[static_cast<std::size_t>(j)] = me * 100 + j;
  auto received = world.all_to_all(counts);
  for (int i = 0; i < n; ++i) EXPECT_EQ(received[static_cast<std::size_t>(i)], i * 100 + me);
  expect_error([&] { world.all_to_all(std::vector<std::int64_t>(1 + n)); },
               troupe::errc::invalid_argument, "one count per PE");
}

// The histogram check: add, then subtract the same updates back; all zero remains.
TEST(pgas_actor, histogram_adds_and_subtracts_back_to_zero) {
  pgas::world world{pgas::world_options{.buffer_bytes = 256}};  // small: many buffers
  const std::int64_t slots = 100;
  std::vector<std::int64_t> table(static_cast<std::size_t>(slots), 0);
  for (std::int64_t sign : {1, -1}) {
    pgas::actor<std::int64_t> histogram{
        world, [&](std::int64_t slot, int) { table[static_cast<std::size_t>(slot)] += sign; }};
    auto random = stream_of(world.pe());
    for (int update = 0; update < 20000; ++update) {
      const auto target = static_cast<std::int64_t>(random() % (slots * world.npes()));
      histogram.send(static_cast<int>(target % world.npes()), target / world.npes());
    }
    histogram.done();
    histogram.wait();
    if (sign == 1) {
      std::int64_t here = 0;
      for (auto count : table) here += count;
      EXPECT_EQ(world.all_reduce(here), 20000 * world.npes());
    }
  }
  for (auto count : table) EXPECT_EQ(count, 0);
}

TEST(pgas_lambda_actor, histogram_runs_against_each_pes_state) {
  pgas::world world;
  struct state {
    std::vector<std::int64_t> table = std::vector<std::int64_t>(64, 0);
  } mine;
  {
    pgas::lambda_actor<state> actor{world, mine};
    auto random = stream_of(world.pe(), 7);
    for (int update = 0; update < 10000; ++update) {
      const auto target = random() % (64u * static_cast<unsigned>(world.npes()));
      const std::size_t slot = target / static_cast<unsigned>(world.npes());
      actor.send(static_cast<int>(target % static_cast<unsigned>(world.npes())),
                 [slot](state& s) { ++s.table[slot]; });
    }
    actor.done();
    actor.wait();
  }
  // The same updates, recomputed: what every PE sent to this one.
  std::vector<std::int64_t> expected(64, 0);
  for (int sender = 0; sender < world.npes(); ++sender) {
    auto random = stream_of(sender, 7);
    for (int update = 0; update < 10000; ++update) {
      const auto target = random() % (64u * static_cast<unsigned>(world.npes()));
      if (static_cast<int>(target % static_cast<unsigned>(world.npes())) == world.pe())
        ++expected[target / static_cast<unsigned>(world.npes())];
    }
  }
  EXPECT_EQ(mine.table, expected);
}

// Nested sends from handlers, with random delays: each token hops on to a random PE until its
// count runs out; termination must wait for the last hop.
TEST(pgas_lambda_actor, nested_sends_terminate_after_the_last_hop_despite_delays) {
  pgas::world world{pgas::world_options{.buffer_bytes = 128}};
  struct state {
    std::int64_t hops = 0;
    std::mt19937 random;
  } mine{0, std::mt19937(static_cast<unsigned>(world.pe()))};
  using actor_type = pgas::lambda_actor<state>;
  {
    actor_type actor{world, mine};
    struct hop {
      int left;
      void operator()(state& s, actor_type::context& here) const {
        ++s.hops;
        if (s.random() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (left > 0)
          here.send(static_cast<int>(s.random() % static_cast<unsigned>(here.pe() + 1)),
                    hop{left - 1});
      }
    };
    for (int token = 0; token < 50; ++token) actor.send(world.pe(), hop{20});
    // Time passes on purpose: half the PEs call done() late, while others' hops still come.
    if (world.pe() % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    actor.done();
    actor.wait();
  }
  EXPECT_EQ(world.all_reduce(mine.hops), 50 * 21 * world.npes());
}

// Per sender, spans of several types and lengths, up to the size limit, arrive intact and in
// order, among them the echoes that handlers send back from the receive buffer.
TEST(pgas_lambda_actor, spans_arrive_intact_and_in_order_per_sender) {
  pgas::world world{pgas::world_options{.buffer_bytes = 512}};  // small: many buffers
  const auto npes = static_cast<std::size_t>(world.npes());
  span_state mine{std::vector<std::int64_t>(npes, 0), std::vector<std::int64_t>(npes, -1)};
  const std::int64_t messages = 600;
  {
    span_actor actor{world, mine};
    for (std::int64_t sequence = 0; sequence < messages; ++sequence)
      for (int pe = 0; pe < world.npes(); ++pe) switch (sequence % 4) {
          case 0:
            send_checked<std::int64_t>(actor, pe, world.pe(), sequence);
            break;
          case 1:
            send_checked<std::uint8_t>(actor, pe, world.pe(), sequence);
            break;
          case 2:
            send_checked<double>(actor, pe, world.pe(), sequence);
            break;
          default:
            send_checked<odd_pair>(actor, pe, world.pe(), sequence);
        }
    actor.done();
    actor.wait();
  }
  EXPECT_EQ(mine.wrong, 0);
  for (auto next : mine.next_from) EXPECT_EQ(next, messages);
  EXPECT_EQ(mine.echoes, (messages + 2) / 3 * world.npes());
}

TEST(pgas_lambda_actor, data_over_the_limit_gets_a_clear_error) {
  pgas::world world{pgas::world_options{.buffer_bytes = 256}};
  span_state mine{std::vector<std::int64_t>(static_cast<std::size_t>(world.npes()), 0), {}};
  span_actor actor{world, mine};
  const auto checker = check<std::int64_t>{0, 0, false};
  const std::size_t most = actor.max_elements<std::int64_t>(checker);
  EXPECT_EQ(most, (256 - 32 - sizeof checker) / sizeof(std::int64_t));
  const std::vector<std::int64_t> too_long(most + 1);
  const std::string limit = "bytes is over the limit of " + std::to_string(256 - 32) + " bytes";
  expect_error([&] { actor.send(0, too_long, checker); }, troupe::errc::invalid_argument, limit);
  expect_error([&] { actor.send(0, too_long, checker); }, troupe::errc::invalid_argument,
               "lambda_actor");
  expect_error([&] { actor.send(world.npes(), std::span<const std::int64_t>{}, checker); },
               troupe::errc::out_of_range, "out of range");
  // Nothing was sent: no PE expects a message.
  actor.done();
  actor.wait();
  EXPECT_EQ(mine.wrong, 0);
}

// Lambdas with and without data, sent in turn to one actor, all run, in the order sent.
TEST(pgas_lambda_actor, lambdas_with_and_without_data_interleave_on_one_actor) {
  pgas::world world{pgas::world_options{.buffer_bytes = 256}};
  struct state {
    std::vector<std::int64_t> last_from;
    std::int64_t plain = 0;
    std::int64_t with_data = 0;
    std::int64_t sum = 0;
    std::int64_t wrong = 0;
    void arrived(int from, std::int64_t sequence) {
      auto& last = last_from[static_cast<std::size_t>(from)];
      wrong += sequence <= last;
      last = sequence;
    }
  } mine{std::vector<std::int64_t>(static_cast<std::size_t>(world.npes()), -1)};
  using actor_type = pgas::lambda_actor<state>;
  const std::int64_t messages = 3000;
  const std::array<std::int32_t, 4> values{1, 10, 100, 1000};
  {
    actor_type actor{world, mine};
    for (std::int64_t sequence = 0; sequence < messages; ++sequence) {
      const int pe = static_cast<int>(sequence % world.npes());
      const auto count = static_cast<std::size_t>(sequence % 5);
      switch (sequence % 4) {
        case 0:
          actor.send(pe, [sequence](state& s, actor_type::context& at) {
            s.arrived(at.from(), sequence);
            ++s.plain;
          });
          break;
        case 1:
          actor.send(pe, [](state& s) { ++s.plain; });
          break;
        case 2:
          actor.send(
              pe, std::span<const std::int32_t>(values).first(count),
              [sequence](state& s, std::span<const std::int32_t> data, actor_type::context& at) {
                s.arrived(at.from(), sequence);
                ++s.with_data;
                for (std::int32_t value : data) s.sum += value;
              });
          break;
        default:
          actor.send(pe, values, [](state& s, std::span<const std::int32_t> data) {
            ++s.with_data;
            for (std::int32_t value : data) s.sum += value;
          });
      }
    }
    actor.done();
    actor.wait();
  }
  std::int64_t plain = 0, with_data = 0, sum = 0;
  for (std::int64_t sequence = 0; sequence < messages; ++sequence) {
    if (sequence % world.npes() != world.pe()) continue;
    if (sequence % 4 < 2) {
      ++plain;
      continue;
    }
    ++with_data;
    const auto count = static_cast<std::size_t>(sequence % 4 == 2 ? sequence % 5 : 4);
    for (std::size_t i = 0; i < count; ++i) sum += values[i];
  }
  // Every PE sent the same sequence.
  EXPECT_EQ(mine.wrong, 0);
  EXPECT_EQ(mine.plain, plain * world.npes());
  EXPECT_EQ(mine.with_data, with_data * world.npes());
  EXPECT_EQ(mine.sum, sum * world.npes());
}

// Per sender and mailbox, messages arrive in the order sent, with variable sizes.
TEST(pgas_selector, variable_size_messages_arrive_whole_and_in_order) {
  pgas::world world{pgas::world_options{.buffer_bytes = 512}};
  std::vector<std::int64_t> next_from(static_cast<std::size_t>(world.npes()), 0);
  std::int64_t strings = 0;
  std::int64_t wrong = 0;
  {
    pgas::selector<2, std::vector<std::int64_t>> sel{
        world,
        {[&](std::span<const std::int64_t> values, int from) {
           // values: the sequence number, then `sequence % 7` copies of the sender
           auto& expected = next_from[static_cast<std::size_t>(from)];
           if (values.empty() || values[0] != expected) ++wrong;
           expected = values.empty() ? expected : values[0] + 1;
           if (values.size() != 1 + static_cast<std::size_t>(values[0] % 7)) ++wrong;
           for (std::size_t i = 1; i < values.size(); ++i) wrong += values[i] != from;
         },
         [&](std::span<const std::int64_t>, int) { ++strings; }},
        pgas::mailbox_graph::none()};
    for (std::int64_t sequence = 0; sequence < 3000; ++sequence) {
      std::vector<std::int64_t> message(1 + static_cast<std::size_t>(sequence % 7), world.pe());
      message[0] = sequence;
      for (int pe = 0; pe < world.npes(); ++pe) sel.send(0, pe, message);
    }
    sel.send(1, (world.pe() + 1) % world.npes(), std::vector<std::int64_t>{});
    sel.done();
    sel.wait();
  }
  EXPECT_EQ(wrong, 0);
  for (auto next : next_from) EXPECT_EQ(next, 3000);
  EXPECT_EQ(strings, 1);

  std::string text;
  {
    pgas::actor<std::string> words{world, [&](std::string_view word, int from) {
                                     if (from == 0) text += std::string(word) + ",";
                                   }};
    if (world.pe() == 0)
      for (const char* word : {"partitioned", "global", "", "mailboxes"})
        words.send(world.npes() - 1, word);
    words.done();
    words.wait();
  }
  EXPECT_EQ(text, world.pe() == world.npes() - 1 ? "partitioned,global,,mailboxes," : "");
}

// Index-gather with two mailboxes: requests to mailbox 0, replies from its handler to mailbox 1,
// which becomes done by itself once mailbox 0 has terminated.
TEST(pgas_selector, requests_and_replies_terminate_through_the_graph) {
  pgas::world world;
  const std::int64_t per_pe = 50;
  std::vector<std::int64_t> table(static_cast<std::size_t>(per_pe));
  for (std::int64_t i = 0; i < per_pe; ++i)
    table[static_cast<std::size_t>(i)] = (i * world.npes() + world.pe()) * 3;  // value of global i
  const int reads = 5000;
  std::vector<std::int64_t> target(reads, -1);
  struct packet {
    std::int64_t index;  // request: the local index there; reply: where the value goes here
    std::int64_t value;
  };
  pgas::selector<2, packet>* self = nullptr;
  pgas::selector<2, packet> gather{
      world,
      {[&](const packet& request, int from) {
         self->send(1, from, packet{request.value, table[static_cast<std::size_t>(request.index)]});
       },
       [&](const packet& reply, int) {
         target[static_cast<std::size_t>(reply.index)] = reply.value;
       }}};
  self = &gather;
  auto random = stream_of(world.pe(), 99);
  std::vector<std::int64_t> index(reads);
  for (int i = 0; i < reads; ++i) {
    index[static_cast<std::size_t>(i)] =
        static_cast<std::int64_t>(random() % (per_pe * world.npes()));
    const auto global = index[static_cast<std::size_t>(i)];
    gather.send(0, static_cast<int>(global % world.npes()), packet{global / world.npes(), i});
  }
  auto finished = gather.finished();
  expect_error([&] { gather.done(1); }, troupe::errc::invalid_argument, "becomes done by itself");
  gather.done(0);
  gather.wait();
  EXPECT_TRUE(finished.is_ready());
  for (int i = 0; i < reads; ++i)
    EXPECT_EQ(target[static_cast<std::size_t>(i)], index[static_cast<std::size_t>(i)] * 3);
}

TEST(pgas_selector, a_diamond_graph_terminates_in_order) {
  pgas::world world;
  std::int64_t at_three = 0;
  pgas::selector<4, int>* self = nullptr;
  auto forward = [&](int to) {
    return [&, to](int value, int) { self->send(static_cast<std::size_t>(to), world.pe(), value); };
  };
  pgas::selector<4, int> diamond{
      world,
      {[&](int value, int) {
         self->send(1, world.pe(), value);
         self->send(2, world.pe(), value);
       },
       forward(3), forward(3), [&](int value, int) { at_three += value; }},
      pgas::mailbox_graph{}.edge(0, 1).edge(0, 2).edge(1, 3).edge(2, 3)};
  self = &diamond;
  for (int i = 1; i <= 100; ++i) diamond.send(0, (world.pe() + i) % world.npes(), i);
  diamond.done();
  world.barrier();  // done on this PE: the barrier waits for everything to be processed
  EXPECT_TRUE(diamond.terminated());
  EXPECT_EQ(world.all_reduce(at_three), 2 * 5050 * world.npes());
}

TEST(pgas_selector, a_cycle_is_rejected_by_name) {
  pgas::world world;
  auto ignore = [](int, int) {};
  expect_error(
      [&] {
        pgas::selector<3, int> cyclic{world,
                                      {ignore, ignore, ignore},
                                      pgas::mailbox_graph{}.edge(0, 1).edge(1, 2).edge(2, 0)};
      },
      troupe::errc::invalid_argument, "cycle, 0 -> 1 -> 2 -> 0");
  expect_error(
      [&] {
        pgas::selector<2, int> wrong{world, {ignore, ignore}, pgas::mailbox_graph{}.edge(0, 5)};
      },
      troupe::errc::out_of_range, "edge 0 -> 5");
  expect_error(
      [&] {
        pgas::selector<2, int> missing{world, {ignore, nullptr}};
      },
      troupe::errc::invalid_argument, "mailbox 1 has no handler");
  // The world goes on: a selector made after the rejected ones works.
  std::int64_t got = 0;
  pgas::actor<int> fine{world, [&](int value, int) { got += value; }};
  fine.send(0, 1);
  fine.done();
  fine.wait();
  EXPECT_EQ(world.all_reduce(got), world.pe() == 0 ? world.npes() : world.npes());
}

TEST(pgas_selector, bad_input_gets_a_clear_error) {
  pgas::world world{pgas::world_options{.buffer_bytes = 64}};
  pgas::actor<std::string> actor{world, [](std::string_view, int) {}};
  expect_error([&] { actor.send(world.npes(), "x"); }, troupe::errc::out_of_range,
               "PE " + std::to_string(world.npes()) + " is out of range");
  expect_error([&] { actor.send(-1, "x"); }, troupe::errc::out_of_range, "out of range");
  expect_error([&] { actor.send(0, std::string(33, 'x')); }, troupe::errc::invalid_argument,
               "33 bytes is over the limit of 32 bytes");
  actor.send(0, std::string(32, 'x'));  // exactly the limit
  expect_error([&] { actor.send(1, 0, "x"); }, troupe::errc::out_of_range,
               "mailbox 1 does not exist");
  actor.done();
  expect_error([&] { actor.send(0, "late"); }, troupe::errc::invalid_argument,
               "is done on this PE");
  actor.wait();
  expect_error([] { pgas::world tiny{pgas::world_options{.buffer_bytes = 8}}; },
               troupe::errc::invalid_argument, "outside 64 bytes");
}

TEST(pgas_selector, leaving_scope_means_done_and_loses_nothing) {
  pgas::world world;
  std::int64_t received = 0;
  {
    pgas::actor<int> actor{world, [&](int, int) { ++received; }};
    for (int pe = 0; pe < world.npes(); ++pe) actor.send(pe, pe);
  }  // no done(), no wait(): the destructor does both
  EXPECT_EQ(received, world.npes());
}

TEST(pgas_symmetric_array, shmem_style_operations_match_closed_forms) {
  pgas::world world;
  const int n = world.npes();
  pgas::symmetric_array<std::int64_t> array{world, 10};
  // atomic_add: every PE adds (pe + 1) to every element: each ends at n(n+1)/2.
  for (std::size_t g = 0; g < array.size(); ++g) array.atomic_add(g, world.pe() + 1);
  array.quiet();
  for (auto value : array.local()) EXPECT_EQ(value, n * (n + 1) / 2);
  // put_nbi: PE p writes 1000 * g + p into the elements g with g % n == p's successor.
  for (std::size_t g = 0; g < array.size(); ++g)
    if (static_cast<int>(g % static_cast<std::size_t>(n)) == (world.pe() + 1) % n)
      array.put_nbi(g, static_cast<std::int64_t>(1000 * g) + world.pe());
  array.quiet();
  for (std::size_t l = 0; l < array.local().size(); ++l) {
    const std::size_t g = l * static_cast<std::size_t>(n) + static_cast<std::size_t>(world.pe());
    EXPECT_EQ(array.local()[l], static_cast<std::int64_t>(1000 * g) + (world.pe() + n - 1) % n);
  }
  // get_nbi: read everything back, by future and by callback.
  std::vector<troupe::future<std::int64_t>> futures;
  std::vector<std::int64_t> by_callback(array.size(), -1);
  for (std::size_t g = 0; g < array.size(); ++g) {
    futures.push_back(array.get_nbi(g));
    array.get_nbi(g, [&by_callback, g](std::int64_t value) { by_callback[g] = value; });
  }
  array.quiet();
  for (std::size_t g = 0; g < array.size(); ++g) {
    const auto owner = static_cast<std::int64_t>(g % static_cast<std::size_t>(n));
    const std::int64_t expected = static_cast<std::int64_t>(1000 * g) + (owner + n - 1) % n;
    ASSERT_TRUE(futures[g].is_ready());
    EXPECT_EQ(futures[g].get(), expected);
    EXPECT_EQ(by_callback[g], expected);
  }
  expect_error([&] { array.put_nbi(array.size(), 0); }, troupe::errc::out_of_range,
               "element " + std::to_string(array.size()) + " is out of range");
}
