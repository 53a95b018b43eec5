// The tour's pgas section: a histogram on 4 PEs, run by starting this program again under MPI.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "tour.hpp"
#if TROUPE_WITH_MPI
#include "troupe/pgas.hpp"
#endif

namespace tour {

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

}  // namespace tour
