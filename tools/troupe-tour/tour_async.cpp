// The tour's futures section: the async layer on the actor system's executor.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tour.hpp"

namespace tour {

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

}  // namespace tour
