// The PGAS histogram in the actor form: each PE sends increments to slots of a table that is
// partitioned over all PEs; the runtime aggregates them and detects when all have been applied.
//   mpirun -n 4 build/release/examples/pgas_histogram
#include <cstdint>
#include <iostream>
#include <vector>

#include "troupe/pgas.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  const std::int64_t slots_per_pe = 100;
  std::vector<std::int64_t> table(slots_per_pe, 0);  // this PE's part of the table

  // The handler runs on the PE that owns the slot, one message at a time: no locks.
  troupe::pgas::actor<std::int64_t> histogram{
      world, [&](std::int64_t slot, int /*from*/) { ++table[static_cast<std::size_t>(slot)]; }};
  for (std::int64_t i = 0; i < 10000; ++i) {
    const std::int64_t global = (i * 7919 + world.pe()) % (slots_per_pe * world.npes());
    histogram.send(static_cast<int>(global % world.npes()), global / world.npes());
  }
  histogram.done();  // no more sends from this PE
  histogram.wait();  // every PE's increments are in every table

  std::int64_t here = 0;
  for (auto count : table) here += count;
  const auto total = world.all_reduce(here);
  if (world.pe() == 0)
    std::cout << "histogram: " << total << " increments over " << world.npes() << " PEs (expected "
              << 10000 * world.npes() << ")\n";
  return total == 10000 * world.npes() ? 0 : 1;
}
