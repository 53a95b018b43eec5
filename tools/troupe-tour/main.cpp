// troupe-tour: the first program to run after building troupe. It exercises every capability of
// this build on the machine's defaults, prints section by section what it did and what came
// out, checks every result against an expectation computed independently, and exits with 1 if
// any check fails (2 on a bad command line).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "troupe/troupe.hpp"
#if TROUPE_WITH_MPI
#include "troupe/pgas.hpp"
#endif

#if !defined(TROUPE_WITH_OPENCL) || !defined(TROUPE_WITH_CUDA) || !defined(TROUPE_WITH_MPI)
#error "tools/troupe-tour/CMakeLists.txt defines TROUPE_WITH_OPENCL, _CUDA and _MPI as 0 or 1"
#endif

namespace {

using namespace std::chrono_literals;
using troupe::actor;
using troupe::event_based_actor;
using clock_type = std::chrono::steady_clock;

// -- output -------------------------------------------------------------------

template <class... Ts>
std::string text(const Ts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

std::string milliseconds(clock_type::duration elapsed) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1)
      << std::chrono::duration<double, std::milli>(elapsed).count() << " ms";
  return out.str();
}

/// "1 job", "2 jobs".
std::string counted(std::size_t count, const std::string& noun) {
  return text(count, " ", noun, count == 1 ? "" : "s");
}

/// Prints the tour section by section and counts the checks that failed.
class report {
 public:
  void section(const std::string& title) { std::cout << "\n" << title << std::endl; }

  /// Context that is not itself a check.
  void note(const std::string& line) { std::cout << "          " << line << std::endl; }

  /// A result, and whether it is what was expected.
  void check(bool passed, const std::string& line) {
    std::cout << (passed ? "  ok      " : "  FAILED  ") << line << std::endl;
    ++checks_;
    if (!passed) ++failures_;
  }

  int checks() const { return checks_; }
  int failures() const { return failures_; }

 private:
  int checks_ = 0;
  int failures_ = 0;
};

// -- waiting with a limit ---------------------------------------------------------
// A tour that hangs tells the user nothing, so every wait gives up after a while.

constexpr auto patience = 20s;

template <class T>
T await(troupe::future<T> f) {
  if (f.wait_for(patience) != std::future_status::ready)
    throw std::runtime_error(text("a future was not ready within ", patience.count(), " s"));
  return f.get();
}

/// How a future ended: its error code and message if it failed.
struct outcome {
  bool failed = false;
  troupe::errc code = troupe::errc::none;  // none also for exceptions other than troupe::error
  std::string message;
};

template <class T>
outcome outcome_of(troupe::future<T> f) {
  try {
    await(std::move(f));
    return {};
  } catch (const troupe::error& e) {
    return {true, e.code(), e.what()};
  } catch (const std::exception& e) {
    return {true, troupe::errc::none, e.what()};
  }
}

/// Runs `f` as a job on `executor` and returns the future of its result.
template <class F>
auto run_on(troupe::executor& executor, F f) {
  return troupe::make_ready_future().then(executor, std::move(f));
}

// -- configuration ----------------------------------------------------------------

/// Where a setting came from, by troupe::config's precedence: command line, environment, default.
std::string source_of(const std::vector<std::string>& args, const std::string& option,
                      const char* variable) {
  for (const auto& arg : args)
    if (arg == option || arg.rfind(option + "=", 0) == 0)
      return "the command line (" + option + ")";
  if (const char* value = std::getenv(variable))
    return text("the environment (", variable, "=", value, ")");
  return "the default";
}

/// Posts `count` jobs that each wait until all have started, and returns how many distinct
/// threads ran them: with `count` workers, all of them.
std::size_t concurrent_workers(troupe::executor& executor, std::size_t count) {
  std::mutex mutex;
  std::condition_variable changed;
  std::set<std::thread::id> threads;
  std::size_t started = 0;
  std::size_t finished = 0;
  for (std::size_t i = 0; i < count; ++i)
    executor.post([&] {
      std::unique_lock lock{mutex};
      threads.insert(std::this_thread::get_id());
      ++started;
      changed.notify_all();
      changed.wait_for(lock, patience, [&] { return started == count; });
      ++finished;
      changed.notify_all();
    });
  std::unique_lock lock{mutex};
  changed.wait(lock, [&] { return finished == count; });  // the jobs use these locals
  return threads.size();
}

void tour_configuration(troupe::actor_system& system, const std::vector<std::string>& args,
                        report& out) {
  out.section("configuration");
  const auto& settings = system.settings();
  auto workers = settings.resolved_threads();
  auto source = source_of(args, "--troupe.threads", "TROUPE_THREADS");
  if (settings.threads == 0)
    source += text(": one per hardware thread, and this machine has ",
                   std::thread::hardware_concurrency());
  out.note(text("worker threads: ", workers, ", from ", source));
  auto probed = std::min<std::size_t>(workers, 256);
  auto seen = concurrent_workers(system.default_executor(), probed);
  out.check(seen == probed, text(counted(probed, "job"), " ran at the same time on ",
                                 counted(seen, "distinct worker thread")));
  out.note(text("throughput: ", settings.throughput, " messages per actor turn, from ",
                source_of(args, "--troupe.throughput", "TROUPE_THROUGHPUT")));
}

// -- futures ----------------------------------------------------------------------

void tour_futures(troupe::actor_system& system, report& out) {
  out.section("futures (async layer)");
  auto& executor = system.default_executor();

  troupe::promise<int> seed;
  auto chain =
      seed.get_future().then([](int x) { return x * 2; }).then([](int x) { return x + 1; });
  std::thread producer{[&seed] { seed.set_value(20); }};
  producer.join();
  int chained = await(std::move(chain));
  out.check(chained == 41,
            text("then: a promise set to 20 by another thread, then * 2, then + 1: ", chained));

  auto nested = run_on(executor, [] { return 6; }).then([&executor](int x) {
    return run_on(executor, [x] { return x * 7; });
  });
  static_assert(std::is_same_v<decltype(nested), troupe::future<int>>);
  int unwrapped = await(std::move(nested));
  out.check(unwrapped == 42,
            text("unwrapping: a continuation returning future<int> gave future<int>: ", unwrapped));

  auto [number, word] = await(troupe::when_all(
      run_on(executor, [] { return 7; }), run_on(executor, [] { return std::string{"seven"}; })));
  auto number_value = number.get();
  auto word_value = word.get();
  out.check(number_value == 7 && word_value == "seven",
            text("when_all(int, string): (", number_value, ", \"", word_value, "\")"));

  const int count = 1000;
  std::vector<troupe::future<std::int64_t>> squares;
  for (std::int64_t i = 1; i <= count; ++i)
    squares.push_back(run_on(executor, [i] { return i * i; }));
  std::int64_t sum_of_squares = 0;
  for (auto& square : await(troupe::when_all(std::move(squares)))) sum_of_squares += square.get();
  const std::int64_t n = count;
  out.check(sum_of_squares == n * (n + 1) * (2 * n + 1) / 6,
            text("when_all over ", count, " jobs: sum of squares ", sum_of_squares));

  troupe::promise<int> never;  // never set, so it cannot be first
  std::vector<troupe::future<int>> racers;
  racers.push_back(never.get_future());
  racers.push_back(run_on(executor, [] { return 5; }));
  auto first = await(troupe::when_any(std::move(racers)));
  int winner = first.futures[first.index].get();
  out.check(first.index == 1 && winner == 5, text("when_any(never ready, a job giving 5): input ",
                                                  first.index, " won with ", winner));

  auto flow =
      troupe::dataflow([](int a, int b, int c) { return a * b + c; },
                       run_on(executor, [] { return 6; }), run_on(executor, [] { return 7; }), 100);
  int flowed = await(std::move(flow));
  out.check(flowed == 142, text("dataflow(a * b + c) over two jobs and the value 100: ", flowed));

  bool skipped = true;
  auto failing = run_on(executor, [] {
                   return 1;
                 }).then([](int) -> int {
                     throw std::runtime_error("bad input");
                   }).then([&skipped](int x) {
    skipped = false;
    return x;
  });
  auto thrown = outcome_of(std::move(failing));
  out.check(thrown.failed && thrown.message == "bad input" && skipped,
            text("error propagation: a continuation threw '", thrown.message,
                 "'; the next one was skipped and get() rethrew it"));

  bool called = false;
  auto blocked = troupe::dataflow(
      [&called](int a, int b) {
        called = true;
        return a + b;
      },
      run_on(executor, [] { return 1; }),
      troupe::make_exceptional_future<int>(
          troupe::error{troupe::errc::invalid_argument, "the second input is missing"}));
  auto missing = outcome_of(std::move(blocked));
  out.check(missing.code == troupe::errc::invalid_argument && !called,
            text("dataflow with a failed input: not called, failed with ",
                 troupe::to_string(missing.code), " (", missing.message, ")"));

  troupe::future<int> orphan;
  {
    troupe::promise<int> forgotten;
    orphan = forgotten.get_future();
  }
  auto broken = outcome_of(std::move(orphan));
  out.check(broken.code == troupe::errc::broken_promise,
            text("a promise destroyed unsatisfied: its future failed with ",
                 troupe::to_string(broken.code)));
}

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
    answers += (answers.empty() ? "" : " ") + await(troupe::request<std::string>(gate, input));
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

// -- actors: requests between actors ----------------------------------------------

struct open_gate {};
struct ping {};
struct answered_by {
  troupe::actor_id worker;
  int value;
};

void tour_requests(troupe::actor_system& system, report& out) {
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

// -- actors: failures, monitors, links --------------------------------------------

struct watch {
  actor target;
};
struct trapped_exit {
  troupe::actor_id source;
  troupe::error reason;
};

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

// -- a parallel workload ------------------------------------------------------------

/// A 64-bit mixing function (splitmix64): cheap, and no compiler turns its sum into a formula.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t sum_range(std::uint64_t first, std::uint64_t last) {
  std::uint64_t sum = 0;
  for (auto i = first; i < last; ++i) sum += mix(i);
  return sum;
}

/// Fork-join: sums a range directly if it is small, else splits it between two new actors and
/// answers with the sum of their answers once both arrive.
class range_sum final : public event_based_actor {
 public:
  range_sum(troupe::actor_system& system, std::uint64_t grain,
            std::shared_ptr<std::atomic<std::size_t>> spawned)
      : event_based_actor(system, "range_sum"), grain_(grain), spawned_(std::move(spawned)) {}

  troupe::behavior make_behavior() override {
    return {[this](std::uint64_t first, std::uint64_t last) {
      if (last - first <= grain_) return troupe::make_ready_future(sum_range(first, last));
      auto middle = first + (last - first) / 2;
      auto left = system().spawn<range_sum>(grain_, spawned_);
      auto right = system().spawn<range_sum>(grain_, spawned_);
      spawned_->fetch_add(2, std::memory_order_relaxed);
      return troupe::dataflow(std::plus<>{}, troupe::request<std::uint64_t>(left, first, middle),
                              troupe::request<std::uint64_t>(right, middle, last));
    }};
  }

 private:
  std::uint64_t grain_;
  std::shared_ptr<std::atomic<std::size_t>> spawned_;
};

void tour_workload(troupe::actor_system& system, report& out) {
  out.section("a parallel workload");
  const std::uint64_t count = std::uint64_t{1} << 26;
  const std::uint64_t grain = std::uint64_t{1} << 16;
  auto spawned = std::make_shared<std::atomic<std::size_t>>(1);

  // The plain loop first, while the workers are parked and leave its core alone.
  auto start = clock_type::now();
  auto sequential = sum_range(0, count);
  auto sequential_time = clock_type::now() - start;

  start = clock_type::now();
  auto root = system.spawn<range_sum>(grain, spawned);
  auto parallel = await(troupe::request<std::uint64_t>(root, std::uint64_t{0}, count));
  auto parallel_time = clock_type::now() - start;

  std::ostringstream speedup;
  speedup << std::fixed << std::setprecision(2)
          << std::chrono::duration<double>(sequential_time).count() /
                 std::chrono::duration<double>(parallel_time).count();
  out.check(parallel == sequential,
            text("fork-join sum of mix(i) for i < ", count, " over ", spawned->load(),
                 " actors: ", std::hex, parallel, std::dec, ", equal to a plain loop's"));
  out.note(text("actors: ", milliseconds(parallel_time), " on ",
                counted(system.settings().resolved_threads(), "worker"), "; plain loop: ",
                milliseconds(sequential_time), " on one thread (speedup ", speedup.str(), ")"));
}

// -- devices ----------------------------------------------------------------------

/// The same kernel for both backends: OpenCL C, and CUDA C++ for NVRTC.
const char* saxpy_source(troupe::backend b) {
  return b == troupe::backend::cuda
             ? R"(extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
                  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) y[i] = a * x[i] + y[i];
                })"
             : R"(__kernel void saxpy(float a, __global const float* x, __global float* y, uint n) {
                  size_t i = get_global_id(0);
                  if (i < n) y[i] = a * x[i] + y[i];
                })";
}

void tour_devices(troupe::actor_system& system, report& out) {
  out.section("devices (device layer)");
  auto all = system.devices();
  for (const auto& d : all) {
    const auto& info = d.info();
    auto level = info.backend == troupe::backend::cuda
                     ? "compute capability " + troupe::to_string(info.compute_capability)
                     : "OpenCL " + troupe::to_string(info.opencl_version);
    out.note(text(troupe::to_string(info.backend), " ", troupe::to_string(info.type), ": ",
                  info.name, " (", info.vendor, "; ", level, "; ", info.compute_units,
                  " compute units; ", info.global_memory >> 20, " MiB)"));
  }
  for (const auto& u : all.unavailable())
    out.note(text(troupe::to_string(u.backend), ": no devices (", u.reason, ")"));
  out.check(true, text("discovered ", counted(all.size(), "device")));

  // A futurized pipeline on each device: every step returns a future, and each waits for the
  // previous one on the device, not on this thread.
  for (const auto& dev : all) {
    const unsigned n = 1 << 20;
    std::vector<float> x(n), y(n);
    for (unsigned i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 1000);
      y[i] = 1.0f;
    }
    auto start = std::chrono::steady_clock::now();
    auto program = dev.compile(saxpy_source(dev.backend()));
    auto dx = dev.allocate<float>(n);
    auto dy = dev.allocate<float>(n);
    auto wx = dx.write(x);
    auto wy = dy.write(y);
    auto compiled = program.get();
    auto first = dev.launch(compiled, "saxpy", troupe::nd_range{{n}}, troupe::after(wx, wy), 2.0f,
                            dx, dy, n);
    auto second =
        dev.launch(compiled, "saxpy", troupe::nd_range{{n}}, troupe::after(first), 0.5f, dx, dy, n);
    auto result = dy.read(troupe::after(second)).get();
    auto elapsed = std::chrono::steady_clock::now() - start;
    bool right = true;
    for (unsigned i = 0; i < n && right; ++i) right = result[i] == 2.5f * x[i] + 1.0f;
    out.check(right, text(dev.name(), ": write, write, compile, launch, launch, read as futures: ",
                          "y = 2.5x + 1 on ", n, " floats in ", milliseconds(elapsed),
                          compiled.from_cache() ? " (program from the disk cache)" : ""));
  }
}

// -- kernel actors: a pipeline on device memory ------------------------------------------

const troupe::kernel::source& tour_kernels() {
  static const troupe::kernel::source kernels{
      R"(__kernel void scale(__global const float* x, __global float* y, float by) {
  size_t i = get_global_id(0);
  y[i] = x[i] * by;
}
__kernel void add_one(__global float* x) { x[get_global_id(0)] += 1.0f; })",
      R"(extern "C" __global__ void scale(const float* x, float* y, float by) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] * by;
}
extern "C" __global__ void add_one(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; })",
      ""};
  return kernels;
}

void tour_kernel_actors(troupe::actor_system& system, report& out) {
  out.section("kernel actors (kernel layer)");
  namespace k = troupe::kernel;  // `out` is the report here
  for (const auto& dev : system.devices()) {
    // Three kernel actors composed: the data goes to the device once, stays there between the
    // stages (a mem_ref carries each stage's event to the next), and comes back once.
    const std::size_t n = 1 << 16;
    const troupe::nd_range range{{n}};
    auto scale = system.spawn_kernel(tour_kernels(), "scale", range, k::on(dev), k::in<float>{},
                                     k::out<float, k::ref>{}, k::priv<float>{2.0f});
    auto add_one = system.spawn_kernel(tour_kernels(), "add_one", range, k::on(dev),
                                       k::in_out<float, k::ref, k::ref>{});
    auto back = system.spawn_kernel(tour_kernels(), "scale", range, k::on(dev),
                                    k::in<float, k::ref>{}, k::out<float>{}, k::priv<float>{0.5f});
    auto pipeline = back * add_one * scale;
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 100);
    auto start = std::chrono::steady_clock::now();
    auto y = troupe::request<std::vector<float>>(pipeline, x).get();
    auto elapsed = std::chrono::steady_clock::now() - start;
    bool right = y.size() == n;
    for (std::size_t i = 0; i < n && right; ++i) right = y[i] == x[i] + 0.5f;
    out.check(right, text(dev.name(), ": back * add_one * scale, three kernel actors on device ",
                          "memory: y = (2x + 1) / 2 on ", n, " floats in ", milliseconds(elapsed),
                          " (compiling or loading the programs included)"));
    // A message the kernel actor does not take is an error response, not a crash.
    try {
      troupe::request<std::vector<float>>(scale, std::string{"not floats"}).get();
      out.check(false, "a kernel actor accepted a string");
    } catch (const troupe::error& e) {
      out.check(e.code() == troupe::errc::unexpected_message,
                text("a wrong message type is an error response: ", e.what()));
    }
  }
}

// -- pgas: the histogram on 4 PEs --------------------------------------------------------

// The flag that makes this program one PE of the tour's MPI job instead of the tour.
constexpr const char* pgas_pe_flag = "--troupe-tour-pgas-pe";

#if TROUPE_WITH_MPI
// One PE: 100000 random increments to a table of 1000 slots per PE, then the same increments
// subtracted: every slot must be 0 again, and in between the slots must hold every update.
int run_pgas_pe(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  const std::int64_t slots = 1000;
  const int updates = 100000;
  std::vector<std::int64_t> table(slots, 0);
  std::uint64_t state = 88172645463325252ull + static_cast<std::uint64_t>(world.pe());
  std::vector<std::int64_t> targets(updates);
  for (auto& target : targets) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    target = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(slots * world.npes()));
  }
  auto start = std::chrono::steady_clock::now();
  std::int64_t total = 0;
  for (std::int64_t sign : {1, -1}) {
    troupe::pgas::actor<std::int64_t> histogram{
        world, [&](std::int64_t slot, int) { table[static_cast<std::size_t>(slot)] += sign; }};
    for (std::int64_t target : targets)
      histogram.send(static_cast<int>(target % world.npes()), target / world.npes());
    histogram.done();
    histogram.wait();
    if (sign == 1) {
      std::int64_t here = 0;
      for (auto count : table) here += count;
      total = world.all_reduce(here);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::int64_t nonzero = 0;
  for (auto count : table) nonzero += count != 0;
  nonzero = world.all_reduce(nonzero);
  const double slowest = world.all_reduce(seconds, troupe::pgas::world::reduction::max);
  if (world.pe() == 0)
    std::cout << "pgas-histogram pes=" << world.npes() << " updates=" << total
              << " expected=" << std::int64_t{updates} * world.npes() << " nonzero=" << nonzero
              << " seconds=" << slowest << std::endl;
  return total == std::int64_t{updates} * world.npes() && nonzero == 0 ? 0 : 1;
}
#endif

void tour_pgas(const std::string& self, report& out) {
  out.section("pgas: partitioned global mailboxes (pgas layer)");
#if TROUPE_WITH_MPI
  // This program again, as 4 PEs of an MPI job. Open MPI wants to be told that root may run it
  // and that 4 processes may share fewer cores.
#if defined(__SANITIZE_ADDRESS__)
  // Open MPI's own threads keep allocations until exit, in plugins unloaded by then: reports on
  // them would name no code of ours. Only the PE processes skip the leak check, not the tour.
  const std::string leak_check = "ASAN_OPTIONS=detect_leaks=0 ";
#else
  const std::string leak_check;
#endif
  const std::string command = leak_check +
                              "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                              "OMPI_MCA_rmaps_base_oversubscribe=1 "
                              "OMPI_MCA_btl_vader_single_copy_mechanism=none " +
                              TROUPE_MPIEXEC + " -n 4 '" + self + "' " + pgas_pe_flag + " 2>&1";
  std::string output;
  int status = -1;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, pipe) != nullptr) output += line;
    status = ::pclose(pipe);
  }
  const auto found = output.find("pgas-histogram ");
  if (status != 0 || found == std::string::npos) {
    out.check(false, text("the histogram on 4 PEs failed (", TROUPE_MPIEXEC, " -n 4): ", output));
    return;
  }
  std::string line = output.substr(found, output.find('\n', found) - found);
  out.check(true, text("histogram on 4 PEs over MPI: 100000 updates per PE, aggregated; added "
                       "and subtracted back to an all-zero table (",
                       line, ")"));
#else
  (void)self;
  out.note("not built: MPI was not found");
#endif
}

// -- backends and the command line --------------------------------------------------

void tour_backends(report& out) {
  out.section("optional backends");
  std::vector<std::string> present;
  std::vector<std::string> absent;
  (TROUPE_WITH_OPENCL ? present : absent).push_back("OpenCL");
  (TROUPE_WITH_CUDA ? present : absent).push_back("CUDA");
  (TROUPE_WITH_MPI ? present : absent).push_back("MPI");
  auto list = [](const std::vector<std::string>& names) {
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
    return joined.empty() ? std::string{"none"} : joined;
  };
  out.note(text("compiled in: ", list(present), "; left out: ", list(absent)));
  out.note("the device layer uses OpenCL and CUDA; the pgas layer uses MPI");
}

void print_usage(const char* program) {
  troupe::config defaults;
  std::cout
      << "usage: " << program << " [--troupe.threads=N] [--troupe.throughput=N] [--help]\n\n"
      << "Runs every capability of this troupe build on this machine, prints what it did and\n"
      << "checks every result. Exits with 0 if all checks pass, 1 if one fails, 2 on a bad\n"
      << "command line.\n\n"
      << "  --troupe.threads=N     worker threads (environment: TROUPE_THREADS; default: one per\n"
      << "                         hardware thread, " << defaults.resolved_threads() << " here)\n"
      << "  --troupe.throughput=N  messages an actor handles before it lets others run\n"
      << "                         (environment: TROUPE_THROUGHPUT; default: "
      << defaults.throughput << ")\n"
      << "  --help                 print this and exit\n";
}

}  // namespace

int main(int argc, char** argv) {
#if TROUPE_WITH_MPI
  if (argc > 1 && std::string(argv[1]) == pgas_pe_flag) return run_pgas_pe(argc, argv);
#endif
  std::vector<std::string> args(argv, argv + argc);
  troupe::config settings;
  try {
    settings = troupe::config{argc, argv};
  } catch (const troupe::error& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 2;
  }
  for (std::size_t i = 1; i < settings.remaining_args.size(); ++i) {
    const auto& arg = settings.remaining_args[i];
    if (arg == "--help" || arg == "-h") {
      print_usage(argv[0]);
      return 0;
    }
    std::cerr << argv[0] << ": unknown argument '" << arg << "' (try --help)\n";
    return 2;
  }

  std::cout << "troupe tour: every capability of this build, on this machine's defaults"
            << std::endl;
  report out;
  {
    troupe::actor_system system{settings};
    // A section that throws (a wait that ran out, say) counts as a failed check; the rest run.
    auto run = [&](const char* name, auto&& section) {
      try {
        section();
      } catch (const std::exception& e) {
        out.check(false, text(name, " stopped: ", e.what()));
      }
    };
    run("configuration", [&] { tour_configuration(system, args, out); });
    run("futures", [&] { tour_futures(system, out); });
    run("actor basics", [&] { tour_actor_basics(system, out); });
    run("requests", [&] { tour_requests(system, out); });
    run("failures", [&] { tour_failures(system, out); });
    run("composition", [&] { tour_composition(system, out); });
    run("registry", [&] { tour_registry(system, out); });
    run("scoped_actor", [&] { tour_scoped_actor(system, out); });
    run("workload", [&] { tour_workload(system, out); });
    run("devices", [&] { tour_devices(system, out); });
    run("kernel actors", [&] { tour_kernel_actors(system, out); });
  }
  tour_pgas(std::filesystem::read_symlink("/proc/self/exe").string(), out);
  tour_backends(out);

  std::cout << "\n";
  if (out.failures() == 0) {
    std::cout << "troupe tour: all " << out.checks() << " checks passed" << std::endl;
    return 0;
  }
  std::cout << "troupe tour: " << out.failures() << " of " << out.checks() << " checks FAILED"
            << std::endl;
  return 1;
}
