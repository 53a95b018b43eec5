// The one-sided side of the bale kernels: a window of integers on every PE.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace bale {

// A window of `count` integers on every PE, locked for passive-target access while it lives.
// MPI allocates the memory: MPI_Win_create over user memory needs an RMA-capable transport, which
// shared-memory-only Open MPI setups lack.
class rma_window {
 public:
  explicit rma_window(std::size_t count) {
    MPI_Win_allocate(static_cast<MPI_Aint>(count * sizeof(std::int64_t)), sizeof(std::int64_t),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &data_, &window_);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, window_);
  }
  ~rma_window() {
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
  }
  rma_window(const rma_window&) = delete;
  rma_window& operator=(const rma_window&) = delete;
  MPI_Win get() const noexcept { return window_; }
  std::int64_t* data() const noexcept { return data_; }

 private:
  std::int64_t* data_ = nullptr;
  MPI_Win window_ = MPI_WIN_NULL;
};

}  // namespace bale
