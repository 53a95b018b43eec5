// The PGAS tests run under mpirun: MPI is initialized here, so that each test can create and
// destroy worlds of its own; only PE 0 prints GoogleTest's report.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int pe = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &pe);
  if (pe != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  // Every PE's verdict counts: one PE's failure fails the job.
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
