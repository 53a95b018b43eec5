// bench-savina: troupe against CAF on Savina-style actor benchmarks, side by side in one process
// (BENCHMARKS.md). Each method's result is checked against its closed form on every run.
#include <cstdint>
#include <string>

#include "common/harness.hpp"
#include "core/savina.hpp"

int main(int argc, char** argv) {
  using namespace troupe::bench;
  return run_main("savina", argc, argv, [](harness& bench) {
    // --quick divides the sizes by about 100.
    auto size = [&](int64_t full, int64_t quick) { return bench.quick() ? quick : full; };
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

    int64_t round_trips = size(1'000'000, 10'000);
    compare("savina_ping_pong", "n=" + text(round_trips), round_trips,
            [&](auto& side) { return side.ping_pong(round_trips); });

    int64_t workers = 64;
    int64_t messages = size(20'000, 200);
    compare("savina_fork_join", "actors=" + text(workers) + ";messages=" + text(messages),
            workers * messages, [&](auto& side) { return side.fork_join(workers, messages); });

    int64_t increments = size(5'000'000, 50'000);
    compare("savina_counting", "n=" + text(increments), increments,
            [&](auto& side) { return side.counting(increments); });

    int64_t big_actors = 256;
    int64_t pings = size(2'000, 20);
    compare("savina_big", "actors=" + text(big_actors) + ";pings=" + text(pings),
            big_actors * pings, [&](auto& side) { return side.big(big_actors, pings); });

    int64_t spawned = size(1'000'000, 10'000);
    compare("savina_spawn_send", "n=" + text(spawned), spawned,
            [&](auto& side) { return side.spawn_send(spawned); });

    int64_t leaves = size(1'000'000, 10'000);
    compare("savina_skynet", "leaves=" + text(leaves), leaves * (leaves - 1) / 2,
            [&](auto& side) { return side.skynet(leaves); });
  });
}
