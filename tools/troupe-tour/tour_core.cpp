// The tour's actor sections: the core layer, actors talking to actors and to main.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tour.hpp"

namespace tour {

using namespace std::chrono_literals;
using troupe::actor;
using troupe::event_based_actor;

namespace {

// -- actors: spawn, state, become -------------------------------------------------

struct add {
  int amount;
};
struct get_total {};

/// A class-based actor: state in members, touched by one message at a time.
class counter final : public event_based_actor {
 public:
  explicit counter(troupe::actor_system& system) : event_based_actor(system, "counter") {}

  troupe::behavior make_behavior() override {
    return {[this](add request) { total_ += request.amount; },
            [this](get_total) { return total_; }};
  }

 private:
  int total_ = 0;
};

struct coin {};
struct push {};

/// A turnstile: locked until a coin arrives, then lets one push through.
troupe::behavior turnstile(event_based_actor* self) {
  troupe::behavior unlocked{[](coin) { return std::string{"refund"}; },
                            [self](push) {
                              self->unbecome();
                              return std::string{"pass"};
                            }};
  return {[self, unlocked](coin) {
            self->become(troupe::keep_behavior, unlocked);
            return std::string{"unlocked"};
          },
          [](push) { return std::string{"locked"}; }};
}

}  // namespace

void tour_actor_basics(troupe::actor_system& system, report& out) {
  out.section("actors (core layer)");
  auto adder = system.spawn([](int a, int b) { return a + b; });
  int sum = await(troupe::request<int>(adder, 40, 2));
  out.check(sum == 42, text("spawn a lambda, request<int>(adder, 40, 2) from main: ", sum));

  auto tally = system.spawn<counter>();
  const int last = 100;
  for (int i = 1; i <= last; ++i) troupe::send(tally, add{i});
  int total = await(troupe::request<int>(tally, get_total{}));
  out.check(total == last * (last + 1) / 2,
            text("state: a counter actor got add{1..", last, "} and reports ", total));

  auto gate = system.spawn(turnstile);
  std::string answers;
  const std::string expected = "locked unlocked refund pass locked";
  auto ask = [&](auto input) {
    // Not `separator + answer`: GCC 12 warns falsely (-Wrestrict) on that operator+ here.
    if (!answers.empty()) answers += " ";
    answers += await(troupe::request<std::string>(gate, input));
  };
  ask(push{});
  ask(coin{});
  ask(coin{});
  ask(push{});
  ask(push{});
  out.check(
      answers == expected,
      text("become/unbecome: a turnstile answered push, coin, coin, push, push with: ", answers));
}

namespace {

// -- actors: requests between actors ----------------------------------------------

struct open_gate {};
struct ping {};
struct answered_by {
  troupe::actor_id worker;
  int value;
};

/// request.then inside an actor: the relay answers other messages while its own request waits.
void tour_request_then(troupe::actor_system& system, report& out) {
  // Holds every request until open_gate arrives, then answers each with the square.
  auto gate = system.spawn([](event_based_actor* self) {
    auto waiting = std::make_shared<std::vector<std::pair<troupe::response_promise, int>>>();
    return troupe::behavior{[self, waiting](int x) {
                              waiting->emplace_back(self->make_response_promise(), x);
                              return waiting->back().first;
                            },
                            [waiting](open_gate) {
                              for (auto& [promise, x] : *waiting) promise.deliver(x * x);
                              auto released = waiting->size();
                              waiting->clear();
                              return released;
                            }};
  });
  // Asks the gate without blocking and answers its own requester later; meanwhile it answers
  // pings.
  auto relay = system.spawn(
      [](event_based_actor* self, actor server) {
        return troupe::behavior{[self, server](int x) {
                                  auto answer = self->make_response_promise();
                                  self->request(server, x).then(
                                      [answer](int square) mutable { answer.deliver(square + 1); });
                                  return answer;
                                },
                                [](ping) { return std::string{"pong"}; }};
      },
      gate);
  auto pending = troupe::request<int>(relay, 5);
  auto pong = await(troupe::request<std::string>(relay, ping{}));
  bool was_waiting = !pending.is_ready();
  auto released = await(troupe::request<std::size_t>(gate, open_gate{}));
  int relayed = await(std::move(pending));
  out.check(pong == "pong" && was_waiting && released == 1 && relayed == 26,
            text("request.then inside an actor: while its request waited, the relay answered '",
                 pong, "'; then it answered 5 * 5 + 1 = ", relayed));
}

/// delegate: the front end hands each request on, and a worker answers the requester.
void tour_delegate(troupe::actor_system& system, report& out) {
  auto make_worker = [&system] {
    return system.spawn([](event_based_actor* self) {
      return troupe::behavior{[self](int x) { return answered_by{self->id(), x * x}; }};
    });
  };
  auto even = make_worker();
  auto odd = make_worker();
  auto front = system.spawn(
      [](event_based_actor* self, actor even_worker, actor odd_worker) {
        return troupe::behavior{
            [=](int x) { return self->delegate(x % 2 == 0 ? even_worker : odd_worker, x); }};
      },
      even, odd);
  auto four = await(troupe::request<answered_by>(front, 4));
  auto seven = await(troupe::request<answered_by>(front, 7));
  out.check(
      four.worker == even.id() && four.value == 16 && seven.worker == odd.id() && seven.value == 49,
      text("delegate: the front end passed 4 to worker #", four.worker, ", which answered ",
           four.value, ", and 7 to worker #", seven.worker, ", which answered ", seven.value));
}

/// Response promises, delivered by a future continuation or returned as a future.
void tour_response_promise(troupe::actor_system& system, report& out) {
  auto later = system.spawn([](event_based_actor* self) {
    auto& executor = self->system().default_executor();
    return troupe::behavior{[self, &executor](int x) {
                              auto answer = self->make_response_promise();
                              run_on(executor, [x] { return x * 3; }).then([answer](int y) mutable {
                                answer.deliver(y);
                              });
                              return answer;
                            },
                            [&executor](const std::string& word) {
                              return run_on(executor, [word] { return word.size(); });
                            }};
  });
  int tripled = await(troupe::request<int>(later, 14));
  auto length = await(troupe::request<std::size_t>(later, std::string{"troupe"}));
  out.check(tripled == 42 && length == 6,
            text("response promise: delivered by a future continuation, 14 * 3 = ", tripled,
                 "; a handler returning future<size_t> answered size(\"troupe\") = ", length));
}

/// A request that is never answered times out, from main and from an actor.
void tour_timeout(troupe::actor_system& system, report& out) {
  // Never answers: keeps every response promise and delivers none.
  auto silent = system.spawn([](event_based_actor* self) {
    auto unanswered = std::make_shared<std::vector<troupe::response_promise>>();
    return troupe::behavior{[self, unanswered](int) {
      unanswered->push_back(self->make_response_promise());
      return unanswered->back();
    }};
  });
  auto start = clock_type::now();
  auto from_main = outcome_of(troupe::request<int>(silent, 30ms, 1));
  auto waited = clock_type::now() - start;
  // Asks the silent actor with a timeout and answers with the error code it got.
  auto prober = system.spawn(
      [](event_based_actor* self, actor server) {
        return troupe::behavior{[self, server](int x) {
          auto answer = self->make_response_promise();
          self->request(server, 30ms, x)
              .then([answer](int) mutable { answer.deliver(troupe::errc::none); },
                    [answer](troupe::error& e) mutable { answer.deliver(e.code()); });
          return answer;
        }};
      },
      silent);
  auto from_actor = await(troupe::request<troupe::errc>(prober, 2));
  out.check(from_main.code == troupe::errc::request_timeout && waited >= 30ms &&
                from_actor == troupe::errc::request_timeout,
            text("timeout: a 30 ms request from main failed with ",
                 troupe::to_string(from_main.code), " after ", milliseconds(waited),
                 "; one from an actor got ", troupe::to_string(from_actor)));
}

}  // namespace

void tour_requests(troupe::actor_system& system, report& out) {
  tour_request_then(system, out);
  tour_delegate(system, out);
  tour_response_promise(system, out);
  tour_timeout(system, out);
}

namespace {

// -- actors: failures, monitors, links --------------------------------------------

struct watch {
  actor target;
};
struct trapped_exit {
  troupe::actor_id source;
  troupe::error reason;
};

}  // namespace

void tour_failures(troupe::actor_system& system, report& out) {
  troupe::scoped_actor self{system};
  // Monitors what it is told to watch and reports each end to main.
  auto watcher = system.spawn(
      [](event_based_actor* me, actor report_to) {
        return troupe::behavior{[me](const watch& request) { me->monitor(request.target); },
                                [me, report_to](const troupe::down_msg& down) {
                                  me->send(report_to, down.source.id(), down.reason);
                                }};
      },
      self.handle());
  auto watch_actor = [&](const actor& target) {
    await(troupe::request<void>(watcher, watch{target}));
  };

  auto thrower = system.spawn([](int x) {
    if (x < 0) throw std::invalid_argument("negative input");
    return x;
  });
  auto follower = system.spawn(
      [](event_based_actor* me, actor peer) {
        me->link_to(peer);
        return troupe::behavior{[](int x) { return x; }};
      },
      thrower);
  auto survivor = system.spawn(
      [](event_based_actor* me, actor peer, actor report_to) {
        me->set_exit_handler([me, report_to](troupe::exit_msg& exit) {
          me->send(report_to, trapped_exit{exit.source.id(), exit.reason});
        });
        me->link_to(peer);
        return troupe::behavior{[](int x) { return x; }};
      },
      thrower, self.handle());
  auto quitter = system.spawn(
      [](event_based_actor* me) { return troupe::behavior{[me](int) { me->quit(); }}; });
  auto killed = system.spawn([](int x) { return x; });
  auto orphan = system.spawn([](int x) { return x; });
  for (const auto& target : {thrower, follower, quitter, killed, orphan}) watch_actor(target);
  const std::map<troupe::actor_id, std::pair<std::string, troupe::errc>> expected{
      {thrower.id(), {"the thrower", troupe::errc::unhandled_exception}},
      {follower.id(), {"its linked follower", troupe::errc::unhandled_exception}},
      {quitter.id(), {"an actor that quit", troupe::errc::none}},
      {killed.id(), {"an actor given send_exit(kill)", troupe::errc::kill}},
      {orphan.id(), {"an actor whose last handle was dropped", troupe::errc::unreachable}}};

  auto thrown = outcome_of(troupe::request<int>(thrower, -1));
  out.check(thrown.code == troupe::errc::unhandled_exception,
            text("exception in a handler: the requester got ", troupe::to_string(thrown.code), " (",
                 thrown.message, ")"));
  await(troupe::request<void>(quitter, 0));
  troupe::send_exit(killed, troupe::error{troupe::errc::kill, "killed by the tour"});
  orphan = actor{};  // the last handle: the orphan ends as unreachable

  std::map<troupe::actor_id, troupe::error> downs;
  std::vector<trapped_exit> trapped;
  while (downs.size() < expected.size() || trapped.empty()) {
    bool got = self->receive_for(
        patience, [&](troupe::actor_id who, const troupe::error& why) { downs[who] = why; },
        [&](const trapped_exit& exit) { trapped.push_back(exit); });
    if (!got) throw std::runtime_error("a down_msg or exit_msg did not arrive in time");
  }
  for (const auto& [id, entry] : expected) {
    auto reason = downs[id].code();
    out.check(reason == entry.second, text("monitor: down_msg from ", entry.first, ", exit reason ",
                                           troupe::to_string(reason)));
  }
  auto trapped_reason = trapped.front().reason.code();
  auto echoed = await(troupe::request<int>(survivor, 7));
  out.check(
      trapped.front().source == thrower.id() &&
          trapped_reason == troupe::errc::unhandled_exception && echoed == 7,
      text("link with a trapped exit: the survivor got exit_msg(",
           troupe::to_string(trapped_reason), ") from the thrower and still answers ", echoed));
  auto after = outcome_of(troupe::request<int>(thrower, 1));
  int unaffected = await(troupe::request<int>(survivor, 8));
  out.check(after.code == troupe::errc::request_receiver_down && unaffected == 8,
            text("isolation: a request to the failed actor gets ", troupe::to_string(after.code),
                 "; the other actors keep answering (", unaffected, ")"));
}

// -- actors: composition, registry, scoped_actor ----------------------------------

void tour_composition(troupe::actor_system& system, report& out) {
  auto add_one = system.spawn([](int x) { return x + 1; });
  // Answers an odd input with an error (a failed future) instead of throwing, so it lives on.
  auto halve = system.spawn([](int x) {
    if (x % 2 != 0)
      return troupe::make_exceptional_future<int>(
          troupe::error{troupe::errc::invalid_argument, text("halve: ", x, " is odd")});
    return troupe::make_ready_future(x / 2);
  });
  auto describe = system.spawn([](int x) { return text("<", x, ">"); });
  auto pipeline = describe * halve * add_one;

  const int inputs = 1000;
  std::vector<troupe::future<std::string>> results;
  for (int x = 1; x <= inputs; x += 2) results.push_back(troupe::request<std::string>(pipeline, x));
  int correct = 0;
  int x = 1;
  for (auto& result : await(troupe::when_all(std::move(results)))) {
    correct += result.get() == text("<", (x + 1) / 2, ">") ? 1 : 0;
    x += 2;
  }
  auto sample = await(troupe::request<std::string>(pipeline, 41));
  auto failed = outcome_of(troupe::request<std::string>(pipeline, 42));
  out.check(
      correct == inputs / 2 && sample == "<21>" && failed.code == troupe::errc::invalid_argument,
      text("composition describe * halve * add_one: ", correct, " of ", inputs / 2,
           " inputs right, 41 -> ", sample, "; 42 failed at halve with ",
           troupe::to_string(failed.code)));
}

void tour_registry(troupe::actor_system& system, report& out) {
  auto& registry = system.registry();
  registry.put("tour.multiplier", system.spawn([](int a, int b) { return a * b; }));
  auto found = registry.get("tour.multiplier");
  if (!found) throw std::runtime_error("'tour.multiplier' was not found right after put()");
  int product = await(troupe::request<int>(found, 6, 7));
  bool unknown_is_empty = !registry.get("tour.nobody");

  troupe::scoped_actor self{system};
  found->add_monitor(self.handle().address());
  troupe::send_exit(found, troupe::error{troupe::errc::kill, "done with it"});
  bool ended = self->receive_for(patience, [](const troupe::down_msg&) {});
  bool erased = !registry.get("tour.multiplier");
  out.check(
      product == 42 && unknown_is_empty && ended && erased,
      text("registry: found 'tour.multiplier' by name, asked 6 * 7 = ", product,
           "; an unknown name gives an empty handle; the entry went away when its actor ended"));
}

void tour_scoped_actor(troupe::actor_system& system, report& out) {
  troupe::scoped_actor self{system};
  auto echo = system.spawn([](event_based_actor* me) {
    return troupe::behavior{[me](const std::string& word) { me->send(me->current_sender(), word); },
                            [me](int x) { me->send(me->current_sender(), x * 10); }};
  });
  self->send(echo, std::string{"hello"});
  self->send(echo, 4);
  int number = 0;
  std::string word;
  bool got_number = self->receive_for(patience, [&](int x) { number = x; });
  auto waiting = self->mailbox_size();  // the string, skipped by the receive above
  bool got_word = self->receive_for(patience, [&](const std::string& s) { word = s; });
  bool got_more = self->receive_for(20ms, [](int) {});
  out.check(got_number && got_word && number == 40 && word == "hello" && waiting == 1 && !got_more,
            text("scoped_actor: main sent 4 and \"hello\", received ", number, " first while \"",
                 word, "\" waited in the mailbox; receive_for(20 ms) then timed out"));
}

}  // namespace tour
