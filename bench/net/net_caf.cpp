// The CAF 0.17 side of bench-net (see net_caf.hpp): an echo and a sink published with the
// middleman; a pinger that chains request/then; plain sends for streams.
#include "net/net_caf.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>

namespace troupe::bench {

namespace {

struct sink_state {
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
};

// Counts 8-byte messages and the bytes of buffers; get_atom answers and starts over.
caf::behavior sink_actor(caf::stateful_actor<sink_state>* self) {
  return {
      [=](std::int64_t) { ++self->state.messages; },
      [=](std::vector<char>& buffer) {
        self->state.bytes += static_cast<std::int64_t>(buffer.size());
      },
      [=](caf::get_atom) {
        auto result = std::make_pair(self->state.messages, self->state.bytes);
        self->state = sink_state{};
        return caf::make_message(result.first, result.second);
      },
  };
}

caf::behavior echo_actor(caf::event_based_actor*) {
  return {[](std::vector<char>& payload) { return std::move(payload); }};
}

struct ping_state {
  caf::actor partner;
  std::vector<char> payload;
  std::int64_t left = 0;
  std::int64_t equal = 0;
  std::promise<std::int64_t> done;
};

void ping(caf::event_based_actor* self, std::shared_ptr<ping_state> state) {
  self->request(state->partner, caf::infinite, state->payload)
      .then([self, state](std::vector<char>& back) {
        if (back == state->payload) ++state->equal;
        if (--state->left == 0) {
          state->done.set_value(state->equal);
          self->quit();
          return;
        }
        ping(self, state);
      });
}

template <class T>
T value_or_throw(caf::expected<T> result, caf::actor_system& system, const char* what) {
  if (!result) throw std::runtime_error(std::string{what} + ": " + system.render(result.error()));
  return std::move(*result);
}

}  // namespace

struct net_caf::state {
  explicit state(int threads) : system(configure(config, threads)) {}

  static caf::actor_system_config& configure(caf::actor_system_config& settings, int threads) {
    settings.set("scheduler.max-threads", threads);
    settings.load<caf::io::middleman>();
    return settings;
  }

  std::pair<std::int64_t, std::int64_t> ask_sink() {
    caf::scoped_actor self{system};
    std::pair<std::int64_t, std::int64_t> result;
    // CAF 0.17 lost the answer once in a 1,000,000-message stream here: a deadline turns that
    // into a failed run instead of a hang.
    self->request(sink, std::chrono::seconds{120}, caf::get_atom::value)
        .receive(
            [&](std::int64_t messages, std::int64_t bytes) {
              result = {messages, bytes};
            },
            [&](caf::error& failure) {
              throw std::runtime_error("caf sink: " + system.render(failure));
            });
    return result;
  }

  caf::actor_system_config config;  // the system refers to it: declared first
  caf::actor_system system;
  caf::actor echo;
  caf::actor sink;
  bool published = false;
};

net_caf::net_caf(int threads) : state_(std::make_unique<state>(threads)) {}

net_caf::~net_caf() {
  // The actors this side spawned are done or told to end; CAF 0.17 would otherwise wait in its
  // destructor for an actor of its own middleman that a remote_actor left running.
  if (state_->published) {
    caf::anon_send_exit(state_->echo, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(state_->sink, caf::exit_reason::user_shutdown);
  }
  state_->system.await_actors_before_shutdown(false);
}

net_caf::ports net_caf::publish() {
  auto& system = state_->system;
  state_->echo = system.spawn(echo_actor);
  state_->sink = system.spawn(sink_actor);
  state_->published = true;
  ports where;
  where.echo = value_or_throw(system.middleman().publish(state_->echo, 0, "127.0.0.1"), system,
                              "caf publish echo");
  where.sink = value_or_throw(system.middleman().publish(state_->sink, 0, "127.0.0.1"), system,
                              "caf publish sink");
  return where;
}

void net_caf::connect(const ports& where) {
  auto& system = state_->system;
  state_->echo = value_or_throw(system.middleman().remote_actor("127.0.0.1", where.echo), system,
                                "caf remote_actor echo");
  state_->sink = value_or_throw(system.middleman().remote_actor("127.0.0.1", where.sink), system,
                                "caf remote_actor sink");
}

std::int64_t net_caf::round_trips(const std::vector<char>& payload, std::int64_t count) {
  auto pinger = std::make_shared<ping_state>();
  pinger->partner = state_->echo;
  pinger->payload = payload;
  pinger->left = count;
  auto result = pinger->done.get_future();
  state_->system.spawn([pinger](caf::event_based_actor* self) { ping(self, pinger); });
  if (result.wait_for(std::chrono::seconds{120}) != std::future_status::ready)
    throw std::runtime_error("caf round trips: no answer within 120 s");
  return result.get();
}

std::int64_t net_caf::stream(std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) caf::anon_send(state_->sink, i);
  return state_->ask_sink().first;
}

std::int64_t net_caf::bandwidth(std::vector<std::vector<char>> messages) {
  for (auto& message : messages) caf::anon_send(state_->sink, std::move(message));
  return state_->ask_sink().second;
}

}  // namespace troupe::bench
