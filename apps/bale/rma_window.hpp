// The one-sided side of the bale kernels: a window of integers on every PE.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels.hpp"

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
  /// A window of `count` integers, each `value`; at least one, since a PE may have none to share.
  rma_window(std::size_t count, std::int64_t value) : rma_window(std::max<std::size_t>(count, 1)) {
    std::fill(data_, data_ + count, value);
    MPI_Win_sync(window_);
  }
  /// A window holding a copy of `values` (at least one integer).
  explicit rma_window(std::span<const std::int64_t> values)
      : rma_window(std::max<std::size_t>(values.size(), 1)) {
    std::copy(values.begin(), values.end(), data_);
    MPI_Win_sync(window_);
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

// Every PE's rows of a sparse matrix (rows cyclic), exposed for one-sided reads. Reading a row
// takes two blocking gets, where it starts and ends and then its columns, as bale's OpenSHMEM
// versions read rows. Creating it is collective; so is destroying it.
class rma_rows {
 public:
  explicit rma_rows(const sparse_rows& rows)
      : offsets_{std::span<const std::int64_t>{rows.offsets}},
        cols_{std::span<const std::int64_t>{rows.cols}} {}

  /// Reads the row at `local` on PE `owner` into `into`; returns where the row starts among
  /// that PE's columns. Call after a barrier that follows every PE's constructor.
  std::int64_t read(int owner, std::int64_t local, std::vector<std::int64_t>& into) {
    std::int64_t bounds[2] = {0, 0};
    MPI_Get(bounds, 2, MPI_INT64_T, owner, local, 2, MPI_INT64_T, offsets_.get());
    MPI_Win_flush(owner, offsets_.get());
    into.resize(static_cast<std::size_t>(bounds[1] - bounds[0]));
    if (!into.empty()) {
      const auto length = static_cast<int>(into.size());
      MPI_Get(into.data(), length, MPI_INT64_T, owner, bounds[0], length, MPI_INT64_T, cols_.get());
      MPI_Win_flush(owner, cols_.get());
    }
    return bounds[0];
  }

 private:
  rma_window offsets_;
  rma_window cols_;
};

}  // namespace bale
