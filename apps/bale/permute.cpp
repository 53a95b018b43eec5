// Sparse matrix permutation (bale's permute_matrix): row i of A becomes row rows[i] of B and
// column j becomes columns[j]. The new column of a nonzero lives with the column permutation's
// owner, so each nonzero goes there first and on from there to its new row's owner: two hops
// in the actor forms and in the bulk-synchronous one, a blocking get and a put in the one-sided
// form.
#include <algorithm>
#include <numeric>
#include <random>

#include "alltoallv_exchange.hpp"
#include "kernels.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace bale {

namespace pgas = troupe::pgas;

namespace {

struct hop {
  std::int64_t index;  // first hop: the column's local index; second: the new row's local index
  std::int64_t value;  // first hop: the new row; second: the new column
};

}  // namespace

std::vector<std::int64_t> whole_permutation(std::int64_t count, std::uint64_t seed) {
  std::vector<std::int64_t> whole(static_cast<std::size_t>(count));
  std::iota(whole.begin(), whole.end(), 0);
  std::shuffle(whole.begin(), whole.end(), std::mt19937_64{seed});
  return whole;
}

std::vector<std::int64_t> cyclic_permutation(const pgas::world& world, std::int64_t count,
                                             std::uint64_t seed, bool inverse) {
  // The input generator, not the kernel: every PE draws the same whole permutation.
  std::vector<std::int64_t> whole = whole_permutation(count, seed);
  if (inverse) {
    std::vector<std::int64_t> back(whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) back[static_cast<std::size_t>(whole[i])] = i;
    whole.swap(back);
  }
  std::vector<std::int64_t> part;
  for (std::int64_t i = world.pe(); i < count; i += world.npes())
    part.push_back(whole[static_cast<std::size_t>(i)]);
  return part;
}

sparse_rows permute(pgas::world& world, form how, const sparse_rows& matrix,
                    std::span<const std::int64_t> rows, std::span<const std::int64_t> columns) {
  const std::int64_t npes = world.npes();
  const std::size_t local_rows = matrix.rows();
  std::vector<matrix_entry> received;
  switch (how) {
    case form::alltoallv: {
      // Each superstep: the nonzeros to their columns' owners, and on to their new rows'.
      const auto new_row = matrix.per_nonzero([&](std::size_t l) { return rows[l]; });
      alltoallv_exchange<hop> first, second;
      for_each_superstep(matrix.cols.size(), [&](std::size_t begin, std::size_t end) {
        first.bucket(
            end - begin,
            [&](std::size_t i) { return static_cast<int>(matrix.cols[begin + i] % npes); },
            [&](std::size_t i) {
              return hop{matrix.cols[begin + i] / npes, new_row[begin + i]};
            });
        const auto there = first.exchange();
        second.bucket(
            there.size(), [&](std::size_t k) { return static_cast<int>(there[k].value % npes); },
            [&](std::size_t k) {
              return hop{there[k].value / npes, columns[static_cast<std::size_t>(there[k].index)]};
            });
        for (const hop& arrived : second.exchange())
          received.push_back({arrived.index, arrived.value});
      });
      break;
    }
    case form::selector: {
      pgas::selector<2, hop>* self = nullptr;
      pgas::selector<2, hop> moves{
          world,
          {[&](const hop& first, int) {
             const std::int64_t new_row = first.value;
             self->send(1, static_cast<int>(new_row % npes),
                        hop{new_row / npes, columns[static_cast<std::size_t>(first.index)]});
           },
           [&](const hop& second, int) {
             received.push_back({second.index, second.value});
           }}};
      self = &moves;
      for (std::size_t l = 0; l < local_rows; ++l)
        for (std::int64_t k = matrix.offsets[l]; k < matrix.offsets[l + 1]; ++k) {
          const std::int64_t col = matrix.cols[static_cast<std::size_t>(k)];
          moves.send(0, static_cast<int>(col % npes), hop{col / npes, rows[l]});
        }
      moves.done(0);
      moves.wait();
      break;
    }
    case form::lambda: {
      struct state {
        std::span<const std::int64_t> columns;
        std::vector<matrix_entry>* received;
      } here{columns, &received};
      using actor_type = pgas::lambda_actor<state>;
      actor_type moves{world, here};
      for (std::size_t l = 0; l < local_rows; ++l)
        for (std::int64_t k = matrix.offsets[l]; k < matrix.offsets[l + 1]; ++k) {
          const std::int64_t col = matrix.cols[static_cast<std::size_t>(k)];
          const std::int64_t local = col / npes;
          const std::int64_t new_row = rows[l];
          moves.send(
              static_cast<int>(col % npes), [local, new_row](state& s, actor_type::context& at) {
                const std::int64_t new_col = s.columns[static_cast<std::size_t>(local)];
                const std::int64_t n = at.npes();
                at.send(static_cast<int>(new_row % n), [row = new_row / n, new_col](state& there) {
                  there.received->push_back({row, new_col});
                });
              });
        }
      moves.done();
      moves.wait();
      break;
    }
    case form::rma: {
      // Row lengths to the new rows' owners, then each owner's offsets, then the entries.
      rma_window lengths{local_rows};
      rma_window column_map{columns};
      MPI_Barrier(MPI_COMM_WORLD);
      std::vector<std::int64_t> length(local_rows);
      for (std::size_t l = 0; l < local_rows; ++l) {
        length[l] = matrix.offsets[l + 1] - matrix.offsets[l];
        MPI_Put(&length[l], 1, MPI_INT64_T, static_cast<int>(rows[l] % npes), rows[l] / npes, 1,
                MPI_INT64_T, lengths.get());
      }
      MPI_Win_flush_all(lengths.get());
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Win_sync(lengths.get());
      sparse_rows result;
      result.columns = matrix.columns;
      result.offsets.assign(local_rows + 1, 0);
      for (std::size_t r = 0; r < local_rows; ++r)
        result.offsets[r + 1] = result.offsets[r] + lengths.data()[r];
      rma_window starts{local_rows};
      std::copy(result.offsets.begin(), result.offsets.end() - 1, starts.data());
      const std::int64_t most =
          world.all_reduce(result.offsets[local_rows], pgas::world::reduction::max);
      rma_window cols{static_cast<std::size_t>(std::max<std::int64_t>(most, 1))};
      MPI_Win_sync(starts.get());
      MPI_Barrier(MPI_COMM_WORLD);
      for (std::size_t l = 0; l < local_rows; ++l) {
        const int owner = static_cast<int>(rows[l] % npes);
        std::int64_t at = 0;
        MPI_Get(&at, 1, MPI_INT64_T, owner, rows[l] / npes, 1, MPI_INT64_T, starts.get());
        MPI_Win_flush(owner, starts.get());
        for (std::int64_t k = matrix.offsets[l]; k < matrix.offsets[l + 1]; ++k, ++at) {
          const std::int64_t col = matrix.cols[static_cast<std::size_t>(k)];
          const int keeper = static_cast<int>(col % npes);
          std::int64_t new_col = 0;
          MPI_Get(&new_col, 1, MPI_INT64_T, keeper, col / npes, 1, MPI_INT64_T, column_map.get());
          MPI_Win_flush(keeper, column_map.get());  // a blocking get, as shmem_g is
          MPI_Put(&new_col, 1, MPI_INT64_T, owner, at, 1, MPI_INT64_T, cols.get());
          MPI_Win_flush_local(owner, cols.get());
        }
      }
      MPI_Win_flush_all(cols.get());
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Win_sync(cols.get());
      result.cols.assign(cols.data(), cols.data() + result.offsets[local_rows]);
      for (std::size_t r = 0; r < local_rows; ++r)
        std::sort(result.cols.begin() + result.offsets[r],
                  result.cols.begin() + result.offsets[r + 1]);
      return result;
    }
  }
  return rows_from_entries(matrix.columns, local_rows, received);
}

std::string check_permuted(pgas::world& world, const sparse_rows& matrix,
                           const sparse_rows& permuted, std::span<const std::int64_t> row_of,
                           std::span<const std::int64_t> column_of) {
  std::uint64_t expected = 0;
  std::uint64_t found = 0;
  for (std::size_t l = 0; l < matrix.rows(); ++l) {
    const auto row =
        static_cast<std::size_t>(static_cast<std::int64_t>(l) * world.npes() + world.pe());
    for (auto k = matrix.offsets[l]; k < matrix.offsets[l + 1]; ++k)
      expected +=
          entry_hash(row_of[row],
                     column_of[static_cast<std::size_t>(matrix.cols[static_cast<std::size_t>(k)])]);
  }
  for (std::size_t l = 0; l < permuted.rows(); ++l) {
    const auto row = static_cast<std::int64_t>(l) * world.npes() + world.pe();
    for (auto k = permuted.offsets[l]; k < permuted.offsets[l + 1]; ++k)
      found += entry_hash(row, permuted.cols[static_cast<std::size_t>(k)]);
  }
  if (world.all_reduce(expected) != world.all_reduce(found))
    return "the permuted matrix differs from the input with its indices mapped sequentially";
  return {};
}

}  // namespace bale
