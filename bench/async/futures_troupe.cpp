// Future composition on troupe's async layer; see futures.hpp. Mirrors futures_boost.cpp.
#include <vector>

#include "async/futures.hpp"
#include "troupe/troupe.hpp"

namespace troupe::bench {

struct futures_troupe::state {
  explicit state(int threads) : system(make_config(threads)) {}

  static config make_config(int threads) {
    config cfg;
    cfg.threads = static_cast<std::size_t>(threads);
    return cfg;
  }

  actor_system system;  // its scheduler is the pool
};

futures_troupe::futures_troupe(int threads) : state_(std::make_unique<state>(threads)) {}

futures_troupe::~futures_troupe() = default;

int64_t futures_troupe::then_chain_inline(int64_t length) {
  promise<int64_t> first;
  future<int64_t> last = first.get_future();
  for (int64_t link = 0; link < length; ++link)
    last = last.then(inline_execution, [](int64_t value) { return value + 1; });
  first.set_value(0);
  return last.get();
}

int64_t futures_troupe::then_chain_pool(int64_t length) {
  auto& pool = state_->system.default_executor();
  promise<int64_t> first;
  future<int64_t> last = first.get_future();
  for (int64_t link = 0; link < length; ++link)
    last = last.then(pool, [](int64_t value) { return value + 1; });
  first.set_value(0);
  return last.get();
}

int64_t futures_troupe::when_all_sum(int64_t n) {
  std::vector<promise<int64_t>> promises(static_cast<std::size_t>(n));
  std::vector<future<int64_t>> futures;
  futures.reserve(promises.size());
  for (auto& p : promises) futures.push_back(p.get_future());
  auto all = when_all(std::move(futures));
  for (int64_t index = 0; index < n; ++index)
    promises[static_cast<std::size_t>(index)].set_value(index);
  int64_t sum = 0;
  for (auto& f : all.get()) sum += f.get();
  return sum;
}

}  // namespace troupe::bench
