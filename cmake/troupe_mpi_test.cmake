# troupe_mpi_test(name ranks command...): a test that runs `command` as an MPI job of `ranks`
# processes, labelled pgas and mpi.
# Open MPI refuses root without these, and cannot use cross-memory attach in most containers.
# ASAN_OPTIONS replaces setup's for these tests, so it repeats use_sigaltstack=0: ranks that
# compile on PoCL end its LLVM threads, whose alternate signal stacks ASan would try to unmap
# (example_net_remote_sum failed on that CHECK in the ASan tree).
set(TROUPE_MPI_TEST_ENVIRONMENT
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
    ASAN_OPTIONS=detect_leaks=0:use_sigaltstack=0)

function(troupe_mpi_test name ranks)
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS}
                   ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "pgas;mpi" TIMEOUT 300
                       ENVIRONMENT "${TROUPE_MPI_TEST_ENVIRONMENT}")
endfunction()

