#pragma once

namespace troupe::detail {

/// The one place in troupe that initializes MPI, shared by the pgas and net layers. MPI can be
/// initialized once per process only: the first caller initializes it (thread level
/// MPI_THREAD_MULTIPLE, so that net's progress thread and a pgas world on the main thread can
/// both call it) and it is finalized when the process exits, so that later worlds and actor
/// systems of the same process find it ready. MPI that the program initialized itself is
/// adopted and left to the program to finalize. Returns the thread level MPI provides; throws
/// troupe::error (system_gone) if MPI has been finalized already.
int initialize_mpi(int* argc, char*** argv);

/// True if an MPI launcher (mpirun, mpiexec, srun) started this process, or the program
/// initialized MPI itself: then an actor system joins the job's other processes.
bool running_under_mpi();

}  // namespace troupe::detail
