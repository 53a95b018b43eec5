// The net tests run under mpirun, every test on every node: each test builds one actor system
// per node (a collective step) and node 0 mostly drives. Only node 0 prints GoogleTest's report;
// a failure on any node fails the job.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "net_tests: MPI gives thread level %d, not MPI_THREAD_MULTIPLE\n",
                 provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  testing::InitGoogleTest(&argc, argv);
  int node = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &node);
  if (node != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
