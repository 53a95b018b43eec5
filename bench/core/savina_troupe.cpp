// The Savina benchmarks on troupe; see savina.hpp for what each one does. The structure mirrors
// savina_caf.cpp actor for actor, so both sides do the same work.
#include <stdexcept>
#include <string>
#include <vector>

#include "core/savina.hpp"
#include "troupe/troupe.hpp"

namespace troupe::bench {

namespace {

struct start {};
struct done {};
struct ping {};
struct pong {};
struct get_count {};

int64_t receive_result(scoped_actor& self) {
  int64_t result = 0;
  self->receive([&](int64_t value) { result = value; });
  return result;
}

// -- ping-pong ----------------------------------------------------------------

class ping_actor final : public event_based_actor {
 public:
  ping_actor(actor_system& sys, actor partner, actor reporter, int64_t round_trips)
      : event_based_actor(sys, "ping"),
        partner_(std::move(partner)),
        reporter_(std::move(reporter)),
        round_trips_(round_trips) {}

  behavior make_behavior() override {
    send(partner_, int64_t{0});
    return {[this](int64_t ball) {
      if (++received_ < round_trips_) {
        send(partner_, ball + 1);
        return;
      }
      send(reporter_, received_);
      send_exit(partner_, error{errc::user_shutdown, "ping-pong finished"});
      quit();
    }};
  }

 private:
  actor partner_;
  actor reporter_;
  int64_t round_trips_;
  int64_t received_ = 0;
};

// -- fork-join ------------------------------------------------------------------

class fork_join_actor final : public event_based_actor {
 public:
  fork_join_actor(actor_system& sys, actor reporter, int64_t messages)
      : event_based_actor(sys, "fork-join"), reporter_(std::move(reporter)), messages_(messages) {}

  behavior make_behavior() override {
    return {[this](int64_t message) {
      if (fork_join_work(message)) ++processed_;
      if (++received_ == messages_) {
        send(reporter_, processed_);
        quit();
      }
    }};
  }

 private:
  actor reporter_;
  int64_t messages_;
  int64_t received_ = 0;
  int64_t processed_ = 0;
};

// -- counting -------------------------------------------------------------------

class counter_actor final : public event_based_actor {
 public:
  explicit counter_actor(actor_system& sys) : event_based_actor(sys, "counter") {}

  behavior make_behavior() override {
    return {[this](int64_t increment) { count_ += increment; },
            [this](get_count) { return count_; }};
  }

 private:
  int64_t count_ = 0;
};

behavior producer(event_based_actor* self, actor counter, actor reporter, int64_t n) {
  for (int64_t message = 0; message < n; ++message) self->send(counter, int64_t{1});
  self->send(counter, get_count{});
  return {[=](int64_t count) {
    self->send(reporter, count);
    send_exit(counter, error{errc::user_shutdown, "counting finished"});
    self->quit();
  }};
}

// -- big ------------------------------------------------------------------------

class big_actor final : public event_based_actor {
 public:
  big_actor(actor_system& sys, int64_t index, std::shared_ptr<const std::vector<actor>> actors,
            actor reporter, int64_t pings)
      : event_based_actor(sys, "big"),
        index_(index),
        actors_(std::move(actors)),
        reporter_(std::move(reporter)),
        pings_(pings),
        random_(index) {}

  behavior make_behavior() override {
    return {[this](start) {
              if (pings_ > 0) {
                send_ping();
              } else {
                send(reporter_, done{}, int64_t{0});
              }
            },
            [](ping) { return pong{}; },
            [this](pong) {
              if (++pongs_ < pings_) {
                send_ping();
              } else {
                send(reporter_, done{}, pongs_);
              }
            }};
  }

 private:
  void send_ping() {
    auto count = static_cast<int64_t>(actors_->size());
    send((*actors_)[static_cast<std::size_t>(random_.other(index_, count))], ping{});
  }

  int64_t index_;
  std::shared_ptr<const std::vector<actor>> actors_;
  actor reporter_;
  int64_t pings_;
  pseudo_random random_;
  int64_t pongs_ = 0;
};

// -- spawn and send ---------------------------------------------------------------

class collector_actor final : public event_based_actor {
 public:
  collector_actor(actor_system& sys, actor reporter, int64_t n)
      : event_based_actor(sys, "collector"), reporter_(std::move(reporter)), n_(n) {}

  behavior make_behavior() override {
    return {[this](int64_t) {
      if (++acknowledged_ == n_) {
        send(reporter_, acknowledged_);
        quit();
      }
    }};
  }

 private:
  actor reporter_;
  int64_t n_;
  int64_t acknowledged_ = 0;
};

behavior spawned(event_based_actor* self, actor collector) {
  return {[self, collector](int64_t message) {
    self->send(collector, message);
    self->quit();
  }};
}

// -- skynet -----------------------------------------------------------------------

class skynet_actor final : public event_based_actor {
 public:
  skynet_actor(actor_system& sys, actor parent, int64_t number, int64_t size)
      : event_based_actor(sys, "skynet"),
        parent_(std::move(parent)),
        number_(number),
        size_(size) {}

  behavior make_behavior() override {
    if (size_ == 1) {
      send(parent_, number_);
      return {};  // no behavior: the actor ends
    }
    int64_t step = size_ / 10;
    for (int64_t child = 0; child < 10; ++child)
      system().spawn<skynet_actor>(self(), number_ + child * step, step);
    return {[this](int64_t value) {
      sum_ += value;
      if (++received_ == 10) {
        send(parent_, sum_);
        quit();
      }
    }};
  }

 private:
  actor parent_;
  int64_t number_;
  int64_t size_;
  int64_t sum_ = 0;
  int received_ = 0;
};

}  // namespace

struct savina_troupe::state {
  explicit state(int threads) : system(make_config(threads)) {}

  static config make_config(int threads) {
    config cfg;
    cfg.threads = static_cast<std::size_t>(threads);
    return cfg;
  }

  actor_system system;
};

savina_troupe::savina_troupe(int threads) : state_(std::make_unique<state>(threads)) {}

savina_troupe::~savina_troupe() = default;

int64_t savina_troupe::ping_pong(int64_t round_trips) {
  if (round_trips <= 0) return 0;
  auto& system = state_->system;
  scoped_actor self{system};
  auto pong_actor = system.spawn([](int64_t ball) { return ball; });
  system.spawn<ping_actor>(pong_actor, self.handle(), round_trips);
  pong_actor = actor{};
  int64_t received = receive_result(self);
  system.await_all_actors_done();
  return received;
}

int64_t savina_troupe::fork_join(int64_t actors, int64_t messages_per_actor) {
  if (actors <= 0 || messages_per_actor <= 0) return 0;
  auto& system = state_->system;
  scoped_actor self{system};
  std::vector<actor> workers;
  workers.reserve(static_cast<std::size_t>(actors));
  for (int64_t worker = 0; worker < actors; ++worker)
    workers.push_back(system.spawn<fork_join_actor>(self.handle(), messages_per_actor));
  int64_t messages = actors * messages_per_actor;
  for (int64_t message = 0; message < messages; ++message)
    send(workers[static_cast<std::size_t>(message % actors)], message);
  workers.clear();
  int64_t processed = 0;
  for (int64_t report = 0; report < actors; ++report)
    self->receive([&](int64_t count) { processed += count; });
  system.await_all_actors_done();
  return processed;
}

int64_t savina_troupe::counting(int64_t n) {
  auto& system = state_->system;
  scoped_actor self{system};
  system.spawn(producer, system.spawn<counter_actor>(), self.handle(), n);
  int64_t count = receive_result(self);
  system.await_all_actors_done();
  return count;
}

int64_t savina_troupe::big(int64_t actors, int64_t pings_per_actor) {
  if (actors < 2) throw std::invalid_argument("big: expected at least 2 actors");
  auto& system = state_->system;
  scoped_actor self{system};
  auto all = std::make_shared<std::vector<actor>>();
  all->reserve(static_cast<std::size_t>(actors));
  for (int64_t index = 0; index < actors; ++index)
    all->push_back(system.spawn<big_actor>(index, all, self.handle(), pings_per_actor));
  for (auto& a : *all) send(a, start{});
  int64_t pongs = 0;
  for (int64_t report = 0; report < actors; ++report)
    self->receive([&](done, int64_t count) { pongs += count; });
  for (auto& a : *all) send_exit(a, error{errc::user_shutdown, "big finished"});
  all.reset();
  system.await_all_actors_done();
  return pongs;
}

int64_t savina_troupe::spawn_send(int64_t n) {
  if (n <= 0) return 0;
  auto& system = state_->system;
  scoped_actor self{system};
  auto collector = system.spawn<collector_actor>(self.handle(), n);
  for (int64_t index = 0; index < n; ++index) send(system.spawn(spawned, collector), index);
  collector = actor{};
  int64_t acknowledged = receive_result(self);
  system.await_all_actors_done();
  return acknowledged;
}

int64_t savina_troupe::skynet(int64_t leaves) {
  int64_t size = leaves;
  while (size > 1 && size % 10 == 0) size /= 10;
  if (leaves < 1 || size != 1)
    throw std::invalid_argument("skynet: expected a power of 10 leaves, found " +
                                std::to_string(leaves));
  auto& system = state_->system;
  scoped_actor self{system};
  system.spawn<skynet_actor>(self.handle(), int64_t{0}, leaves);
  int64_t sum = receive_result(self);
  system.await_all_actors_done();
  return sum;
}

}  // namespace troupe::bench
