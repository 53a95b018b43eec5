// The main of the test suites that run under mpirun (pgas, net), every test on every process:
// MPI is initialized here, so that each test can make and end worlds and actor systems of its
// own. Only rank 0 prints GoogleTest's report; a failure on any rank fails the job.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  // The net layer's progress thread calls MPI beside the tests' own calls.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "%s: MPI gives thread level %d, not MPI_THREAD_MULTIPLE\n", argv[0],
                 provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
