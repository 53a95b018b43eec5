// The Savina benchmarks on CAF 0.17, written the way a CAF user tuning for speed would: event-based
// (stateful) actors, plain asynchronous sends, answers returned from handlers, lazy_init where an
// actor has nothing to do before its first message, and a hidden scoped_actor on the calling
// thread that receives the result.
#include <caf/all.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/savina.hpp"

namespace troupe::bench {

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

// -- ping_pong ----------------------------------------------------------------

caf::behavior pong_actor(caf::event_based_actor*) {
  // A value returned from a handler goes back to the sender as an ordinary message.
  return {[](int64_t ball) { return ball; }};
}

struct ping_state {
  int64_t received = 0;
};

caf::behavior ping_actor(caf::stateful_actor<ping_state>* self, caf::actor partner,
                         caf::actor reporter, int64_t round_trips) {
  self->send(partner, int64_t{0});
  return {[=](int64_t ball) {
    if (++self->state.received < round_trips) {
      self->send(partner, ball + 1);
      return;
    }
    self->send(reporter, self->state.received);
    self->send_exit(partner, caf::exit_reason::user_shutdown);
    self->quit();
  }};
}

// -- fork_join ----------------------------------------------------------------

struct fork_join_state {
  int64_t received = 0;
  int64_t processed = 0;
};

caf::behavior fork_join_actor(caf::stateful_actor<fork_join_state>* self, caf::actor reporter,
                              int64_t messages) {
  return {[=](int64_t message) {
    auto& state = self->state;
    if (fork_join_work(message)) ++state.processed;
    if (++state.received == messages) {
      self->send(reporter, state.processed);
      self->quit();
    }
  }};
}

// -- counting -----------------------------------------------------------------

struct counter_state {
  int64_t count = 0;
};

caf::behavior counter_actor(caf::stateful_actor<counter_state>* self) {
  return {
      [=](int64_t increment) { self->state.count += increment; },
      [=](caf::get_atom) { return self->state.count; },
  };
}

caf::behavior producer_actor(caf::event_based_actor* self, caf::actor counter, caf::actor reporter,
                             int64_t n) {
  for (int64_t message = 0; message < n; ++message) self->send(counter, int64_t{1});
  // Mailboxes are FIFO per sender, so the answer counts every increment above.
  self->send(counter, caf::get_atom::value);
  return {[=](int64_t count) {
    self->send(reporter, count);
    self->send_exit(counter, caf::exit_reason::user_shutdown);
    self->quit();
  }};
}

// -- big ----------------------------------------------------------------------

struct big_state {
  std::shared_ptr<const std::vector<caf::actor>> actors;
  pseudo_random random{0};
  int64_t pongs = 0;
};

caf::behavior big_actor(caf::stateful_actor<big_state>* self, int64_t index,
                        std::shared_ptr<const std::vector<caf::actor>> actors, caf::actor reporter,
                        int64_t pings) {
  self->state.actors = std::move(actors);
  self->state.random = pseudo_random{index};
  auto send_ping = [=] {
    auto& state = self->state;
    auto count = static_cast<int64_t>(state.actors->size());
    self->send((*state.actors)[state.random.other(index, count)], caf::ping_atom::value);
  };
  return {
      [=](start_atom) {
        if (pings > 0) {
          send_ping();
        } else {
          self->send(reporter, done_atom::value, int64_t{0});
        }
      },
      [=](caf::ping_atom) { return caf::pong_atom::value; },
      [=](caf::pong_atom) {
        if (++self->state.pongs < pings) {
          send_ping();
        } else {
          self->send(reporter, done_atom::value, self->state.pongs);
        }
      },
  };
}

// -- spawn_send ---------------------------------------------------------------

struct collector_state {
  int64_t acknowledged = 0;
};

caf::behavior collector_actor(caf::stateful_actor<collector_state>* self, caf::actor reporter,
                              int64_t n) {
  return {[=](int64_t) {
    if (++self->state.acknowledged == n) {
      self->send(reporter, self->state.acknowledged);
      self->quit();
    }
  }};
}

caf::behavior spawned_actor(caf::event_based_actor* self, caf::actor collector) {
  return {[=](int64_t message) {
    self->send(collector, message);
    self->quit();
  }};
}

// -- skynet -------------------------------------------------------------------

struct skynet_state {
  int64_t sum = 0;
  int received = 0;
};

caf::behavior skynet_actor(caf::stateful_actor<skynet_state>* self, caf::actor parent,
                           int64_t number, int64_t size) {
  if (size == 1) {
    self->send(parent, number);
    self->quit();
    return {};
  }
  int64_t step = size / 10;
  auto me = caf::actor_cast<caf::actor>(self);
  for (int64_t child = 0; child < 10; ++child) {
    self->spawn(skynet_actor, me, number + child * step, step);
  }
  return {[=](int64_t value) {
    auto& state = self->state;
    state.sum += value;
    if (++state.received == 10) {
      self->send(parent, state.sum);
      self->quit();
    }
  }};
}

// Receives one int64_t result on the calling thread.
int64_t receive_result(caf::scoped_actor& self) {
  int64_t result = 0;
  self->receive([&](int64_t value) { result = value; });
  return result;
}

// Runs `body` with a scoped actor on the calling thread and returns its result once every actor
// has terminated. The scoped actor counts as running (hidden or not), so it goes first.
template <class Body>
int64_t run_to_completion(caf::actor_system& system, Body body) {
  int64_t result = 0;
  {
    caf::scoped_actor self{system};
    result = body(self);
  }
  system.await_all_actors_done();
  return result;
}

}  // namespace

// -- savina_caf ---------------------------------------------------------------

struct savina_caf::state {
  explicit state(int threads) : system(configure(config, threads)) {
    auto workers = system.scheduler().num_workers();
    if (workers != static_cast<std::size_t>(threads)) {
      throw std::runtime_error("savina_caf: expected " + std::to_string(threads) +
                               " CAF worker threads, found " + std::to_string(workers));
    }
  }

  static caf::actor_system_config& configure(caf::actor_system_config& settings, int threads) {
    settings.set("scheduler.max-threads", threads);
    return settings;
  }

  caf::actor_system_config config;  // the system refers to it: declared first
  caf::actor_system system;
};

savina_caf::savina_caf(int threads) : state_(std::make_unique<state>(threads)) {}

savina_caf::~savina_caf() = default;

int64_t savina_caf::ping_pong(int64_t round_trips) {
  if (round_trips <= 0) return 0;
  auto& system = state_->system;
  return run_to_completion(system, [&](caf::scoped_actor& self) {
    auto pong = system.spawn<caf::lazy_init>(pong_actor);
    system.spawn(ping_actor, pong, caf::actor_cast<caf::actor>(self), round_trips);
    return receive_result(self);
  });
}

int64_t savina_caf::fork_join(int64_t actors, int64_t messages_per_actor) {
  if (actors <= 0 || messages_per_actor <= 0) return 0;
  auto& system = state_->system;
  return run_to_completion(system, [&](caf::scoped_actor& self) {
    auto reporter = caf::actor_cast<caf::actor>(self);
    std::vector<caf::actor> workers;
    workers.reserve(static_cast<std::size_t>(actors));
    for (int64_t worker = 0; worker < actors; ++worker) {
      workers.push_back(
          system.spawn<caf::lazy_init>(fork_join_actor, reporter, messages_per_actor));
    }
    int64_t messages = actors * messages_per_actor;
    for (int64_t message = 0; message < messages; ++message) {
      caf::anon_send(workers[static_cast<std::size_t>(message % actors)], message);
    }
    int64_t processed = 0;
    int64_t reports = 0;
    self->receive_for(reports, actors)([&](int64_t count) { processed += count; });
    return processed;
  });
}

int64_t savina_caf::counting(int64_t n) {
  auto& system = state_->system;
  return run_to_completion(system, [&](caf::scoped_actor& self) {
    auto counter = system.spawn<caf::lazy_init>(counter_actor);
    system.spawn(producer_actor, counter, caf::actor_cast<caf::actor>(self), n);
    return receive_result(self);
  });
}

int64_t savina_caf::big(int64_t actors, int64_t pings_per_actor) {
  if (actors < 2) throw std::invalid_argument("big: expected at least 2 actors");
  auto& system = state_->system;
  return run_to_completion(system, [&](caf::scoped_actor& self) {
    auto reporter = caf::actor_cast<caf::actor>(self);
    auto all = std::make_shared<std::vector<caf::actor>>();
    all->reserve(static_cast<std::size_t>(actors));
    // lazy_init: no actor reads `all` before its first message, sent once `all` is complete.
    for (int64_t index = 0; index < actors; ++index) {
      all->push_back(
          system.spawn<caf::lazy_init>(big_actor, index, all, reporter, pings_per_actor));
    }
    for (auto& actor : *all) caf::anon_send(actor, start_atom::value);
    int64_t pongs = 0;
    int64_t reports = 0;
    self->receive_for(reports, actors)([&](done_atom, int64_t count) { pongs += count; });
    // Everyone has its pongs, so no ping is in flight any more.
    for (auto& actor : *all) self->send_exit(actor, caf::exit_reason::user_shutdown);
    return pongs;
  });
}

int64_t savina_caf::spawn_send(int64_t n) {
  if (n <= 0) return 0;
  auto& system = state_->system;
  return run_to_completion(system, [&](caf::scoped_actor& self) {
    auto collector =
        system.spawn<caf::lazy_init>(collector_actor, caf::actor_cast<caf::actor>(self), n);
    for (int64_t index = 0; index < n; ++index) {
      caf::anon_send(system.spawn<caf::lazy_init>(spawned_actor, collector), index);
    }
    return receive_result(self);
  });
}

int64_t savina_caf::skynet(int64_t leaves) {
  int64_t size = leaves;
  while (size > 1 && size % 10 == 0) size /= 10;
  if (leaves < 1 || size != 1) {
    throw std::invalid_argument("skynet: expected a power of 10 leaves, found " +
                                std::to_string(leaves));
  }
  auto& system = state_->system;
  return run_to_completion(system, [&](caf::scoped_actor& self) {
    system.spawn(skynet_actor, caf::actor_cast<caf::actor>(self), int64_t{0}, leaves);
    return receive_result(self);
  });
}

}  // namespace troupe::bench
