// The tour's parallel workload: a fork-join sum over thousands of actors against a plain loop.
#include <atomic>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <memory>
#include <sstream>

#include "tour.hpp"

namespace tour {
namespace {

using troupe::event_based_actor;

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

}  // namespace

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

}  // namespace tour
