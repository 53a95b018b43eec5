// SHMEM-style operations on a symmetric array, all aggregated: atomic_add, put_nbi and get_nbi
// (with a future), completed together by quiet().
//   mpirun -n 4 build/release/examples/pgas_shmem
#include <cstdint>
#include <iostream>
#include <vector>

#include "troupe/pgas.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  troupe::pgas::symmetric_array<std::int64_t> counters{world, 8};  // 8 per PE

  for (std::size_t g = 0; g < counters.size(); ++g) counters.atomic_add(g, 1);  // from every PE
  counters.quiet();  // collective: every add of every PE is applied

  std::vector<troupe::future<std::int64_t>> reads;
  for (std::size_t g = 0; g < counters.size(); ++g) reads.push_back(counters.get_nbi(g));
  counters.quiet();

  bool right = true;
  for (auto& read : reads) right = right && read.get() == world.npes();
  if (world.pe() == 0)
    std::cout << "shmem: every counter holds " << reads.size() << " x " << world.npes()
              << (right ? " (right)\n" : " (WRONG)\n");
  return right ? 0 : 1;
}
