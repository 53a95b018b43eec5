// bench-savina: troupe against CAF on Savina-style actor benchmarks, side by side in one process
// (BENCHMARKS.md). Each method's result is checked against its closed form on every run.
#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "core/savina.hpp"

int main(int argc, char** argv) {
  using namespace troupe::bench;
  return run_main("savina", argc, argv, [](harness& bench) {
    // Each benchmark sweeps its size over three decades (the paper-sized run last); --quick
    // runs only the smallest.
    auto sizes = [&](int64_t largest) {
      std::vector<int64_t> result{largest / 100, largest / 10, largest};
      if (bench.quick()) result.resize(1);
      return result;
    };
    std::string threads = ";threads=" + std::to_string(bench.threads());

    // Both systems live for the whole run, so their start-up is never timed.
    savina_troupe troupe_side{bench.threads()};
    savina_caf caf_side{bench.threads()};

    // `method(side)` runs one benchmark on either side.
    auto compare = [&](const std::string& benchmark, const std::string& parameters,
                       int64_t expected, auto method) {
      if (!bench.selected(benchmark)) return;
      bench.compare<int64_t>(benchmark, parameters + threads,
                             {{"troupe", [&] { return method(troupe_side); }},
                              {"caf", [&] { return method(caf_side); }}},
                             expected);
    };
    auto text = [](int64_t value) { return std::to_string(value); };

    for (int64_t round_trips : sizes(1'000'000))
      compare("savina_ping_pong", "n=" + text(round_trips), round_trips,
              [&](auto& side) { return side.ping_pong(round_trips); });

    int64_t workers = 64;
    for (int64_t messages : sizes(20'000))
      compare("savina_fork_join", "messages=" + text(messages) + ";actors=" + text(workers),
              workers * messages, [&](auto& side) { return side.fork_join(workers, messages); });

    for (int64_t increments : sizes(5'000'000))
      compare("savina_counting", "n=" + text(increments), increments,
              [&](auto& side) { return side.counting(increments); });

    int64_t big_actors = 256;
    for (int64_t pings : sizes(2'000))
      compare("savina_big", "pings=" + text(pings) + ";actors=" + text(big_actors),
              big_actors * pings, [&](auto& side) { return side.big(big_actors, pings); });

    for (int64_t spawned : sizes(1'000'000))
      compare("savina_spawn_send", "n=" + text(spawned), spawned,
              [&](auto& side) { return side.spawn_send(spawned); });

    for (int64_t leaves : sizes(1'000'000))
      compare("savina_skynet", "leaves=" + text(leaves), leaves * (leaves - 1) / 2,
              [&](auto& side) { return side.skynet(leaves); });
  });
}
