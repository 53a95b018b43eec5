#include "support/mpi/mpi_owner.hpp"

#include <mpi.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "troupe/async/error.hpp"

namespace troupe::detail {

namespace {

std::mutex owner_mutex;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

int initialize_mpi(int* argc, char*** argv) {
  std::lock_guard guard{owner_mutex};
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    throw error(errc::system_gone,
                "MPI: the program has finalized MPI already; troupe cannot use it after "
                "MPI_Finalize");
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
    return provided;
  }
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  std::atexit(finalize_at_exit);
  return provided;
}

bool running_under_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return true;
  // Open MPI's mpirun, MPICH/Hydra (PMI) and PMIx launchers (srun among them) set these.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

}  // namespace troupe::detail
