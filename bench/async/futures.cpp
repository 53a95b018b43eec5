// bench-futures: troupe's futures against Boost.Thread futures, side by side in one process
// (BENCHMARKS.md): then chains run inline and on a pool, and when_all over many futures.
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <system_error>
#include <vector>

#include "async/futures.hpp"
#include "common/harness.hpp"

namespace {

// Runs `function` on a new thread with a stack of `bytes` (only the pages touched are committed)
// and waits for it; rethrows what it threw.
template <class Function>
void run_on_stack(std::size_t bytes, Function function) {
  struct context {
    Function* function;
    std::exception_ptr error;
  };
  context state{&function, nullptr};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, bytes);
  pthread_t thread;
  int error = pthread_create(
      &thread, &attributes,
      [](void* argument) -> void* {
        auto* running = static_cast<context*>(argument);
        try {
          (*running->function)();
        } catch (...) {
          running->error = std::current_exception();
        }
        return nullptr;
      },
      &state);
  pthread_attr_destroy(&attributes);
  if (error != 0) throw std::system_error(error, std::generic_category(), "pthread_create");
  pthread_join(thread, nullptr);
  if (state.error) std::rethrow_exception(state.error);
}

// Boost runs a chain of launch::sync continuations recursively, some 600 bytes of stack per link,
// so 100,000 links overflow the usual 8 MiB. Both sides run on a thread with this much.
constexpr std::size_t stack_bytes = std::size_t{512} << 20;

}  // namespace

int main(int argc, char** argv) {
  using namespace troupe::bench;
  return run_main("futures", argc, argv, [](harness& bench) {
    run_on_stack(stack_bytes, [&] {
      std::string threads = ";threads=" + std::to_string(bench.threads());

      // Both pools live for the whole run, so their start-up is never timed.
      futures_troupe troupe_side{bench.threads()};
      futures_boost boost_side{bench.threads()};

      // `method(side)` runs one benchmark on either side.
      auto compare = [&](const std::string& benchmark, int64_t n, int64_t expected, auto method) {
        if (!bench.selected(benchmark)) return;
        bench.compare<int64_t>(benchmark, "n=" + std::to_string(n) + threads,
                               {{"troupe", [&] { return method(troupe_side); }},
                                {"boost", [&] { return method(boost_side); }}},
                               expected);
      };

      // Sizes sweep three decades up to the (100,000 links, 1M futures); --quick runs
      // only the smallest.
      auto sizes = [&](int64_t largest) {
        std::vector<int64_t> result{largest / 100, largest / 10, largest};
        if (bench.quick()) result.resize(1);
        return result;
      };
      for (int64_t length : sizes(100'000))
        compare("futures_then_chain_inline", length, length,
                [&](auto& side) { return side.then_chain_inline(length); });
      for (int64_t length : sizes(100'000))
        compare("futures_then_chain_pool", length, length,
                [&](auto& side) { return side.then_chain_pool(length); });
      for (int64_t count : sizes(1'000'000))
        compare("futures_when_all_sum", count, count * (count - 1) / 2,
                [&](auto& side) { return side.when_all_sum(count); });
    });
  });
}
