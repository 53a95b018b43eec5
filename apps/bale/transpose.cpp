// Sparse matrix transpose (bale's transpose_matrix): every nonzero (r, c) becomes (c, r) on the
// PE that owns row c. The actor forms send the pairs; the one-sided form counts each row's
// nonzeros with remote atomics, then claims a place per nonzero and puts it there.
#include <algorithm>
#include <random>
#include <string>

#include "alltoallv_exchange.hpp"
#include "kernels.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace bale {

namespace pgas = troupe::pgas;

// A counting sort by row, columns sorted within each row.
sparse_rows rows_from_entries(std::int64_t columns, std::size_t rows,
                              std::span<const matrix_entry> entries) {
  sparse_rows result;
  result.columns = columns;
  result.offsets.assign(rows + 1, 0);
  for (const matrix_entry& each : entries) ++result.offsets[static_cast<std::size_t>(each.row) + 1];
  for (std::size_t r = 0; r < rows; ++r) result.offsets[r + 1] += result.offsets[r];
  result.cols.resize(entries.size());
  std::vector<std::int64_t> next(result.offsets.begin(), result.offsets.end() - 1);
  for (const matrix_entry& each : entries)
    result.cols[static_cast<std::size_t>(next[static_cast<std::size_t>(each.row)]++)] = each.col;
  for (std::size_t r = 0; r < rows; ++r)
    std::sort(result.cols.begin() + result.offsets[r], result.cols.begin() + result.offsets[r + 1]);
  return result;
}

namespace {

// PE `pe`'s rows of random_matrix, on any PE.
sparse_rows random_matrix_part(int pe, int npes, std::int64_t rows_per_pe,
                               std::int64_t nonzeros_per_row, std::uint64_t seed) {
  const std::int64_t columns = rows_per_pe * npes;
  std::mt19937_64 random{seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(pe)};
  std::uniform_int_distribution<std::int64_t> pick{0, columns - 1};
  sparse_rows matrix;
  matrix.columns = columns;
  for (std::int64_t l = 0; l < rows_per_pe; ++l) {
    std::vector<std::int64_t> row;
    for (std::int64_t k = 0; k < nonzeros_per_row; ++k) row.push_back(pick(random));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    matrix.cols.insert(matrix.cols.end(), row.begin(), row.end());
    matrix.offsets.push_back(static_cast<std::int64_t>(matrix.cols.size()));
  }
  return matrix;
}

}  // namespace

sparse_rows random_matrix(const pgas::world& world, std::int64_t rows_per_pe,
                          std::int64_t nonzeros_per_row, std::uint64_t seed) {
  return random_matrix_part(world.pe(), world.npes(), rows_per_pe, nonzeros_per_row, seed);
}

sparse_rows sequential_transpose(const pgas::world& world, std::int64_t rows_per_pe,
                                 std::int64_t nonzeros_per_row, std::uint64_t seed) {
  const int npes = world.npes();
  const int pe = world.pe();
  std::vector<matrix_entry> entries;
  for (int owner = 0; owner < npes; ++owner) {
    const auto part = random_matrix_part(owner, npes, rows_per_pe, nonzeros_per_row, seed);
    for (std::size_t l = 0; l < part.rows(); ++l) {
      const std::int64_t global_row = static_cast<std::int64_t>(l) * npes + owner;
      for (std::int64_t column : part.row(l))
        if (column % npes == pe) entries.push_back({column / npes, global_row});
    }
  }
  return rows_from_entries(rows_per_pe * npes, static_cast<std::size_t>(rows_per_pe), entries);
}

std::string check_transpose(const pgas::world& world, const sparse_rows& transposed,
                            const sparse_rows& reference) {
  if (transposed == reference) return {};
  if (transposed.rows() != reference.rows())
    return "PE " + std::to_string(world.pe()) + " holds " + std::to_string(transposed.rows()) +
           " rows of the transpose, not " + std::to_string(reference.rows());
  for (std::size_t l = 0; l < reference.rows(); ++l)
    if (!std::ranges::equal(transposed.row(l), reference.row(l)))
      return "row " + std::to_string(static_cast<std::int64_t>(l) * world.npes() + world.pe()) +
             " of the transpose holds " + std::to_string(transposed.row(l).size()) +
             " columns, which differ from the " + std::to_string(reference.row(l).size()) +
             " of the sequential transpose";
  return "the transpose's column count differs from the sequential transpose's";
}

sparse_rows transpose(pgas::world& world, form how, const sparse_rows& matrix) {
  const std::int64_t npes = world.npes();
  const std::int64_t pe = world.pe();
  const std::size_t rows = matrix.rows();
  auto for_each_nonzero = [&](auto&& visit) {
    for (std::size_t l = 0; l < rows; ++l) {
      const std::int64_t global_row = static_cast<std::int64_t>(l) * npes + pe;
      for (std::int64_t k = matrix.offsets[l]; k < matrix.offsets[l + 1]; ++k)
        visit(matrix.cols[static_cast<std::size_t>(k)], global_row);
    }
  };
  std::vector<matrix_entry> received;
  switch (how) {
    case form::selector: {
      pgas::actor<matrix_entry> pairs{world,
                                      [&](const matrix_entry& e, int) { received.push_back(e); }};
      for_each_nonzero([&](std::int64_t col, std::int64_t row) {
        pairs.send(static_cast<int>(col % npes), matrix_entry{col / npes, row});
      });
      pairs.done();
      pairs.wait();
      return rows_from_entries(matrix.columns, rows, received);
    }
    case form::lambda: {
      pgas::lambda_actor<std::vector<matrix_entry>> pairs{world, received};
      for_each_nonzero([&](std::int64_t col, std::int64_t row) {
        const std::int64_t local = col / npes;
        pairs.send(static_cast<int>(col % npes), [local, row](std::vector<matrix_entry>& into) {
          into.push_back({local, row});
        });
      });
      pairs.done();
      pairs.wait();
      return rows_from_entries(matrix.columns, rows, received);
    }
    case form::rma: {
      // 1: count the nonzeros of each transposed row, remotely.
      rma_window counts(rows, 0);
      MPI_Barrier(MPI_COMM_WORLD);
      const std::int64_t one = 1;
      for_each_nonzero([&](std::int64_t col, std::int64_t) {
        MPI_Accumulate(&one, 1, MPI_INT64_T, static_cast<int>(col % npes), col / npes, 1,
                       MPI_INT64_T, MPI_SUM, counts.get());
      });
      MPI_Win_flush_all(counts.get());
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Win_sync(counts.get());
      // 2: offsets here; a cursor per row that remote PEs advance to claim places.
      std::vector<std::int64_t> offsets(rows + 1, 0);
      for (std::size_t r = 0; r < rows; ++r) offsets[r + 1] = offsets[r] + counts.data()[r];
      std::int64_t most = offsets[rows];
      most = world.all_reduce(most, pgas::world::reduction::max);
      rma_window cursors{rows};
      std::copy(offsets.begin(), offsets.end() - 1, cursors.data());
      rma_window cols{static_cast<std::size_t>(std::max<std::int64_t>(most, 1))};
      MPI_Win_sync(cursors.get());
      MPI_Barrier(MPI_COMM_WORLD);
      for_each_nonzero([&](std::int64_t col, std::int64_t row) {
        const int owner = static_cast<int>(col % npes);
        std::int64_t place = 0;
        MPI_Fetch_and_op(&one, &place, MPI_INT64_T, owner, col / npes, MPI_SUM, cursors.get());
        MPI_Win_flush(owner, cursors.get());
        MPI_Put(&row, 1, MPI_INT64_T, owner, place, 1, MPI_INT64_T, cols.get());
        MPI_Win_flush_local(owner, cols.get());  // `row` may be reused once this returns
      });
      MPI_Win_flush_all(cols.get());
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Win_sync(cols.get());
      sparse_rows result;
      result.columns = matrix.columns;
      result.offsets = offsets;
      result.cols.assign(cols.data(), cols.data() + offsets[rows]);
      for (std::size_t r = 0; r < rows; ++r)
        std::sort(result.cols.begin() + result.offsets[r],
                  result.cols.begin() + result.offsets[r + 1]);
      return result;
    }
    case form::alltoallv: {
      const auto row_of = matrix.per_nonzero(
          [&](std::size_t l) { return static_cast<std::int64_t>(l) * npes + pe; });
      alltoallv_exchange<matrix_entry> pairs;
      for_each_superstep(matrix.cols.size(), [&](std::size_t begin, std::size_t end) {
        pairs.bucket(
            end - begin,
            [&](std::size_t i) { return static_cast<int>(matrix.cols[begin + i] % npes); },
            [&](std::size_t i) {
              return matrix_entry{matrix.cols[begin + i] / npes, row_of[begin + i]};
            });
        const auto arrived = pairs.exchange();
        received.insert(received.end(), arrived.begin(), arrived.end());
      });
      return rows_from_entries(matrix.columns, rows, received);
    }
  }
  return {};
}

}  // namespace bale
