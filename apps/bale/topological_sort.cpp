// Toposort (bale's toposort): the input is an upper-triangular matrix with a full diagonal whose
// rows and columns were permuted; the kernel finds permutations that make it triangular again.
// Each row keeps the number of its live nonzeros and the XOR of their columns, which is the
// column itself once one is left. A row with one live nonzero, in column c, takes the last free
// position p, and so does column c; then c is removed from every row that has it (the
// transpose's row c lists them), and the rows left with one live nonzero come next.
//
// The actor forms go in rounds: each PE places the rows that were ready when the round began,
// at positions from a prefix sum of the PEs' ready counts, and sends "c is placed" to c's owner,
// which sends "c is removed" on to the rows of c. The bulk-synchronous form goes in the same
// rounds, each round two exchanges of buckets (placements, then removals) in supersteps of
// bounded memory. The one-sided form needs no rounds: a counter on PE 0 hands out the positions,
// and the PE whose remote decrement leaves a row with one nonzero places that row itself.
#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "alltoallv_exchange.hpp"
#include "kernels.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace bale {

namespace pgas = troupe::pgas;

namespace {

// Per local row: how many nonzeros are live, and the XOR of their columns.
struct live_rows {
  std::vector<std::int64_t> count;
  std::vector<std::int64_t> columns_xor;
};

live_rows every_nonzero_live(const sparse_rows& matrix) {
  live_rows live;
  for (std::size_t l = 0; l < matrix.rows(); ++l) {
    live.count.push_back(matrix.offsets[l + 1] - matrix.offsets[l]);
    std::int64_t columns_xor = 0;
    for (std::int64_t k = matrix.offsets[l]; k < matrix.offsets[l + 1]; ++k)
      columns_xor ^= matrix.cols[static_cast<std::size_t>(k)];
    live.columns_xor.push_back(columns_xor);
  }
  return live;
}

// How many of 0 .. n-1 PE `pe` holds when they are laid out cyclically over `npes` PEs.
std::size_t cyclic_share(std::int64_t n, std::int64_t pe, std::int64_t npes) {
  return n > pe ? static_cast<std::size_t>((n - pe + npes - 1) / npes) : 0;
}

// A message of the actor forms: "column `index` (local there) is placed at `value`", then
// "row `index` (local there) loses column `value`".
struct update {
  std::int64_t index;
  std::int64_t value;
};

// The rounds of the actor forms. `place(ready, first, next)` places the local rows `ready` at
// positions first, first - 1, ..., removes their columns, and appends the local rows that are
// left with one live nonzero to `next`. Ends when no PE has a ready row: all are placed, or
// the rest never will be.
template <class PlaceRows>
void in_rounds(pgas::world& world, std::int64_t n, const live_rows& live, PlaceRows place) {
  std::vector<std::int64_t> ready;
  for (std::size_t l = 0; l < live.count.size(); ++l)
    if (live.count[l] == 1) ready.push_back(static_cast<std::int64_t>(l));
  const auto pe = static_cast<std::size_t>(world.pe());
  std::vector<std::int64_t> ready_here(static_cast<std::size_t>(world.npes()), 0);
  std::int64_t placed = 0;  // on all PEs, before this round
  while (true) {
    ready_here[pe] = static_cast<std::int64_t>(ready.size());
    // Every PE's ready count, so each knows where its block of positions starts.
    const auto ready_counts = world.all_reduce(std::span<const std::int64_t>(ready_here));
    const std::int64_t ready_everywhere =
        std::accumulate(ready_counts.begin(), ready_counts.end(), std::int64_t{0});
    if (ready_everywhere == 0) return;
    const std::int64_t before_here =
        std::accumulate(ready_counts.begin(),
                        ready_counts.begin() + static_cast<std::ptrdiff_t>(pe), std::int64_t{0});
    std::vector<std::int64_t> next;
    place(std::span<const std::int64_t>(ready), n - 1 - placed - before_here, next);
    placed += ready_everywhere;
    ready.swap(next);
  }
}

// A ready row's live column, or -1 when the XOR is no column (a matrix that is no permuted
// triangular one), so that a bad input cannot index out of range.
std::int64_t live_column(const live_rows& live, std::int64_t local_row, std::int64_t n) {
  const std::int64_t column = live.columns_xor[static_cast<std::size_t>(local_row)];
  return column >= 0 && column < n ? column : -1;
}

}  // namespace

sparse_rows toposort_input(pgas::world& world, std::int64_t rows_per_pe,
                           std::int64_t nonzeros_per_row, std::uint64_t seed) {
  const std::int64_t npes = world.npes();
  const std::int64_t n = rows_per_pe * npes;
  std::mt19937_64 random{(seed ^ 0x5851F42D4C957F2Dull) * 0x9E3779B97F4A7C15ull +
                         static_cast<std::uint64_t>(world.pe())};
  sparse_rows triangular;
  triangular.columns = n;
  std::vector<std::int64_t> row;
  for (std::int64_t l = 0; l < rows_per_pe; ++l) {
    const std::int64_t i = l * npes + world.pe();
    row.assign(1, i);
    if (i + 1 < n) {
      std::uniform_int_distribution<std::int64_t> right_of_diagonal{i + 1, n - 1};
      for (std::int64_t k = 1; k < nonzeros_per_row; ++k) row.push_back(right_of_diagonal(random));
    }
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    triangular.cols.insert(triangular.cols.end(), row.begin(), row.end());
    triangular.offsets.push_back(static_cast<std::int64_t>(triangular.cols.size()));
  }
  // Rows and columns in random orders: what toposort has to undo.
  return permute(world, form::selector, triangular, cyclic_permutation(world, n, seed + 1),
                 cyclic_permutation(world, n, seed + 2));
}

toposort_permutations toposort(pgas::world& world, form how, const sparse_rows& matrix,
                               const sparse_rows& transposed) {
  const std::int64_t n = matrix.columns;
  const std::int64_t npes = world.npes();
  const std::int64_t pe = world.pe();
  toposort_permutations order{std::vector<std::int64_t>(matrix.rows(), -1),
                              std::vector<std::int64_t>(transposed.rows(), -1)};
  live_rows live = every_nonzero_live(matrix);
  switch (how) {
    case form::alltoallv: {
      alltoallv_exchange<update> placements, removals;
      std::vector<update> placed_here, removed_here;
      in_rounds(
          world, n, live,
          [&](std::span<const std::int64_t> ready, std::int64_t first,
              std::vector<std::int64_t>& next) {
            for_each_superstep(ready.size(), [&](std::size_t begin, std::size_t end) {
              placed_here.clear();
              for (std::size_t i = begin; i < end; ++i) {
                const std::int64_t column = live_column(live, ready[i], n);
                if (column < 0) continue;
                const std::int64_t position = first - static_cast<std::int64_t>(i);
                order.rows[static_cast<std::size_t>(ready[i])] = position;
                placed_here.push_back({column, position});
              }
              placements.bucket(
                  placed_here.size(),
                  [&](std::size_t i) { return static_cast<int>(placed_here[i].index % npes); },
                  [&](std::size_t i) {
                    return update{placed_here[i].index / npes, placed_here[i].value};
                  });
              // Here live the placed columns: their positions, and a removal per row of each.
              const std::span<const update> placed = placements.exchange();
              std::size_t removal_count = 0;
              for (const update& column : placed) {
                const auto local = static_cast<std::size_t>(column.index);
                order.columns[local] = column.value;
                removal_count += static_cast<std::size_t>(transposed.offsets[local + 1] -
                                                          transposed.offsets[local]);
              }
              // The removals in supersteps too: a cursor over (placed column, its row).
              auto local_column_of = [&](std::size_t c) {
                return static_cast<std::size_t>(placed[c].index);
              };
              std::size_t at = 0;
              std::int64_t k = placed.empty() ? 0 : transposed.offsets[local_column_of(0)];
              for_each_superstep(removal_count, [&](std::size_t from, std::size_t to) {
                removed_here.clear();
                for (std::size_t r = from; r < to; ++r) {
                  while (k == transposed.offsets[local_column_of(at) + 1])
                    k = transposed.offsets[local_column_of(++at)];
                  const std::int64_t row = transposed.cols[static_cast<std::size_t>(k++)];
                  removed_here.push_back({row, placed[at].index * npes + pe});
                }
                removals.bucket(
                    removed_here.size(),
                    [&](std::size_t i) { return static_cast<int>(removed_here[i].index % npes); },
                    [&](std::size_t i) {
                      return update{removed_here[i].index / npes, removed_here[i].value};
                    });
                for (const update& removed : removals.exchange()) {
                  const auto local = static_cast<std::size_t>(removed.index);
                  live.columns_xor[local] ^= removed.value;
                  if (--live.count[local] == 1) next.push_back(removed.index);
                }
              });
            });
          });
      break;
    }
    case form::selector: {
      in_rounds(
          world, n, live,
          [&](std::span<const std::int64_t> ready, std::int64_t first,
              std::vector<std::int64_t>& next) {
            pgas::selector<2, update>* self = nullptr;
            pgas::selector<2, update> removals{
                world,
                {[&](const update& placed, int) {
                   // Here lives column placed.index: its position, and its rows.
                   const auto local = static_cast<std::size_t>(placed.index);
                   order.columns[local] = placed.value;
                   const std::int64_t column = placed.index * npes + pe;
                   for (std::int64_t k = transposed.offsets[local];
                        k < transposed.offsets[local + 1]; ++k) {
                     const std::int64_t row = transposed.cols[static_cast<std::size_t>(k)];
                     self->send(1, static_cast<int>(row % npes), update{row / npes, column});
                   }
                 },
                 [&](const update& removed, int) {
                   const auto local = static_cast<std::size_t>(removed.index);
                   live.columns_xor[local] ^= removed.value;
                   if (--live.count[local] == 1) next.push_back(removed.index);
                 }}};
            self = &removals;
            for (std::size_t i = 0; i < ready.size(); ++i) {
              const std::int64_t column = live_column(live, ready[i], n);
              if (column < 0) continue;
              const std::int64_t position = first - static_cast<std::int64_t>(i);
              order.rows[static_cast<std::size_t>(ready[i])] = position;
              removals.send(0, static_cast<int>(column % npes), update{column / npes, position});
            }
            removals.done(0);
            removals.wait();
          });
      break;
    }
    case form::lambda: {
      struct state {
        std::vector<std::int64_t>* column_positions;
        const sparse_rows* transposed;
        live_rows* live;
        std::vector<std::int64_t>* next;
      };
      using actor_type = pgas::lambda_actor<state>;
      in_rounds(world, n, live,
                [&](std::span<const std::int64_t> ready, std::int64_t first,
                    std::vector<std::int64_t>& next) {
                  state here{&order.columns, &transposed, &live, &next};
                  actor_type removals{world, here};
                  for (std::size_t i = 0; i < ready.size(); ++i) {
                    const std::int64_t column = live_column(live, ready[i], n);
                    if (column < 0) continue;
                    const std::int64_t position = first - static_cast<std::int64_t>(i);
                    order.rows[static_cast<std::size_t>(ready[i])] = position;
                    removals.send(
                        static_cast<int>(column % npes),
                        [local = column / npes, position](state& s, actor_type::context& at) {
                          (*s.column_positions)[static_cast<std::size_t>(local)] = position;
                          const std::int64_t pes = at.npes();
                          const std::int64_t removed = local * pes + at.pe();
                          const sparse_rows& rows_of = *s.transposed;
                          for (std::int64_t k = rows_of.offsets[static_cast<std::size_t>(local)];
                               k < rows_of.offsets[static_cast<std::size_t>(local) + 1]; ++k) {
                            const std::int64_t row = rows_of.cols[static_cast<std::size_t>(k)];
                            at.send(static_cast<int>(row % pes),
                                    [row_here = row / pes, removed](state& there) {
                                      const auto l = static_cast<std::size_t>(row_here);
                                      there.live->columns_xor[l] ^= removed;
                                      if (--there.live->count[l] == 1)
                                        there.next->push_back(row_here);
                                    });
                          }
                        });
                  }
                  removals.done();
                  removals.wait();
                });
      break;
    }
    case form::rma: {
      const std::size_t rows = matrix.rows();
      const std::size_t columns = transposed.rows();
      rma_window count{std::span<const std::int64_t>{live.count}};
      rma_window columns_xor{std::span<const std::int64_t>{live.columns_xor}};
      rma_window row_positions(rows, -1);
      rma_window column_positions(columns, -1);
      rma_window column_starts{std::span<const std::int64_t>{transposed.offsets}};
      rma_window column_rows{std::span<const std::int64_t>{transposed.cols}};
      rma_window positions_taken(1, 0);  // PE 0's is the counter
      MPI_Barrier(MPI_COMM_WORLD);
      // The rows this PE places: its own that start ready, then those its decrements make so.
      struct row_at {
        int pe;
        std::int64_t local;
      };
      std::vector<row_at> ready;
      for (std::size_t l = 0; l < rows; ++l)
        if (live.count[l] == 1)
          ready.push_back({static_cast<int>(pe), static_cast<std::int64_t>(l)});
      const std::int64_t one = 1;
      const std::int64_t minus_one = -1;
      std::vector<std::int64_t> rows_of_column;
      while (!ready.empty()) {
        const row_at row = ready.back();
        ready.pop_back();
        std::int64_t column = 0;
        MPI_Fetch_and_op(&one, &column, MPI_INT64_T, row.pe, row.local, MPI_NO_OP,
                         columns_xor.get());
        MPI_Win_flush(row.pe, columns_xor.get());
        if (column < 0 || column >= n) continue;  // no permuted triangular matrix
        std::int64_t taken = 0;
        MPI_Fetch_and_op(&one, &taken, MPI_INT64_T, 0, 0, MPI_SUM, positions_taken.get());
        MPI_Win_flush(0, positions_taken.get());
        const std::int64_t position = n - 1 - taken;
        const int keeper = static_cast<int>(column % npes);
        const std::int64_t local_column = column / npes;
        MPI_Put(&position, 1, MPI_INT64_T, row.pe, row.local, 1, MPI_INT64_T, row_positions.get());
        MPI_Put(&position, 1, MPI_INT64_T, keeper, local_column, 1, MPI_INT64_T,
                column_positions.get());
        std::int64_t bounds[2] = {0, 0};
        MPI_Get(bounds, 2, MPI_INT64_T, keeper, local_column, 2, MPI_INT64_T, column_starts.get());
        MPI_Win_flush(keeper, column_starts.get());
        const std::int64_t length = bounds[1] - bounds[0];
        rows_of_column.resize(static_cast<std::size_t>(length));
        if (length > 0) {
          MPI_Get(rows_of_column.data(), static_cast<int>(length), MPI_INT64_T, keeper, bounds[0],
                  static_cast<int>(length), MPI_INT64_T, column_rows.get());
          MPI_Win_flush(keeper, column_rows.get());
        }
        // `position` may change once the puts have left.
        MPI_Win_flush_local_all(row_positions.get());
        MPI_Win_flush_local_all(column_positions.get());
        for (const std::int64_t removed_from : rows_of_column) {
          const int owner = static_cast<int>(removed_from % npes);
          const std::int64_t local = removed_from / npes;
          MPI_Accumulate(&column, 1, MPI_INT64_T, owner, local, 1, MPI_INT64_T, MPI_BXOR,
                         columns_xor.get());
          // The XOR is complete before the count can say "one left": whoever takes the row
          // reads the column from the XOR.
          MPI_Win_flush(owner, columns_xor.get());
          std::int64_t before = 0;
          MPI_Fetch_and_op(&minus_one, &before, MPI_INT64_T, owner, local, MPI_SUM, count.get());
          MPI_Win_flush(owner, count.get());
          if (before == 2) ready.push_back({owner, local});
        }
      }
      MPI_Win_flush_all(row_positions.get());
      MPI_Win_flush_all(column_positions.get());
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Win_sync(row_positions.get());
      MPI_Win_sync(column_positions.get());
      std::copy(row_positions.data(), row_positions.data() + rows, order.rows.begin());
      std::copy(column_positions.data(), column_positions.data() + columns, order.columns.begin());
      break;
    }
  }
  return order;
}

namespace {

// What keeps `part` (this PE's cyclic part) and the other PEs' from being a permutation of
// 0 .. n-1, summed over all PEs: entries without a position (-1, never placed), entries out of
// range, and positions that no entry or several take. The empty string for a permutation.
std::string permutation_faults(pgas::world& world, std::span<const std::int64_t> part,
                               std::int64_t n) {
  const std::int64_t npes = world.npes();
  std::vector<std::int64_t> seen(cyclic_share(n, world.pe(), npes), 0);
  std::vector<std::int64_t> faults(3, 0);  // unplaced, out of range, not taken once
  {
    pgas::actor<std::int64_t> count{
        world, [&](std::int64_t local, int) { ++seen[static_cast<std::size_t>(local)]; }};
    for (const std::int64_t value : part) {
      if (value < 0 || value >= n) {
        ++faults[value == -1 ? 0 : 1];
        continue;
      }
      count.send(static_cast<int>(value % npes), value / npes);
    }
    count.done();
    count.wait();
  }
  for (const std::int64_t times : seen) faults[2] += times != 1;
  faults = world.all_reduce(std::span<const std::int64_t>(faults));
  std::string text;
  const char* what[] = {"entries never placed (-1): ", "entries out of range: ",
                        "positions not taken exactly once: "};
  for (std::size_t kind = 0; kind < faults.size(); ++kind) {
    if (faults[kind] == 0) continue;
    if (!text.empty()) text += "; ";
    text += what[kind];
    text += std::to_string(faults[kind]);
  }
  return text;
}

// The global index whose position in this PE's cyclic `part` is `position`, or -1.
std::int64_t moved_to(const pgas::world& world, std::span<const std::int64_t> part,
                      std::int64_t position) {
  const auto at = std::find(part.begin(), part.end(), position);
  return at == part.end() ? -1 : (at - part.begin()) * world.npes() + world.pe();
}

// "(row, column)", appended piece by piece: GCC 12 sees a false overlap (-Wrestrict) in
// "(" + std::to_string(row).
std::string coordinates(std::int64_t row, std::int64_t column) {
  std::string text = "(";
  text += std::to_string(row);
  text += ", ";
  text += std::to_string(column);
  text += ')';
  return text;
}

}  // namespace

std::string check_toposort(pgas::world& world, const sparse_rows& matrix,
                           const toposort_permutations& order) {
  const std::int64_t n = matrix.columns;
  const std::int64_t npes = world.npes();
  const std::int64_t pe = world.pe();
  const bool sized =
      order.rows.size() == matrix.rows() && order.columns.size() == cyclic_share(n, pe, npes);
  if (world.all_reduce(std::int64_t{!sized}) != 0)
    return "the permutations do not have one entry per row and column on every PE";
  if (std::string wrong = permutation_faults(world, order.rows, n); !wrong.empty())
    return "the row permutation is none: " + wrong;
  if (std::string wrong = permutation_faults(world, order.columns, n); !wrong.empty())
    return "the column permutation is none: " + wrong;
  // The matrix permuted: every row's leftmost nonzero must be on the diagonal.
  const sparse_rows permuted = permute(world, form::selector, matrix, order.rows, order.columns);
  std::int64_t first_wrong_here = n;
  std::int64_t leftmost_there = -1;  // in row first_wrong_here; -1: an empty row
  std::int64_t wrong_here = 0;
  for (std::size_t l = 0; l < permuted.rows(); ++l) {
    const std::int64_t row = static_cast<std::int64_t>(l) * npes + pe;
    const bool empty = permuted.offsets[l] == permuted.offsets[l + 1];
    const std::int64_t leftmost =
        empty ? -1 : permuted.cols[static_cast<std::size_t>(permuted.offsets[l])];
    if (leftmost == row) continue;
    if (wrong_here++ == 0) {
      first_wrong_here = row;
      leftmost_there = leftmost;
    }
  }
  const std::int64_t first_wrong = world.all_reduce(first_wrong_here, pgas::world::reduction::min);
  if (first_wrong == n) return {};
  // What is wrong there, from the PE that saw it, and where it came from in the input.
  constexpr std::int64_t nobody = std::numeric_limits<std::int64_t>::min();
  const std::int64_t leftmost = world.all_reduce(
      first_wrong_here == first_wrong ? leftmost_there : nobody, pgas::world::reduction::max);
  const std::int64_t wrong = world.all_reduce(wrong_here);
  const std::int64_t input_row =
      world.all_reduce(moved_to(world, order.rows, first_wrong), pgas::world::reduction::max);
  std::string text;
  if (leftmost < 0) {
    text = "row " + std::to_string(first_wrong) + " of the permuted matrix (input row " +
           std::to_string(input_row) + ") is empty";
  } else {
    const std::int64_t input_column =
        world.all_reduce(moved_to(world, order.columns, leftmost), pgas::world::reduction::max);
    const std::string at =
        coordinates(first_wrong, leftmost) + ", input " + coordinates(input_row, input_column);
    text = leftmost < first_wrong
               ? "the permuted matrix has a nonzero below the diagonal at " + at
               : "row " + std::to_string(first_wrong) +
                     " of the permuted matrix has no diagonal nonzero; its leftmost is at " + at;
  }
  if (wrong > 1) text += "; " + std::to_string(wrong - 1) + " more rows are wrong";
  return text;
}

}  // namespace bale
