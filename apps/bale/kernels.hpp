// The bale kernels of HClib-Actor (Paul et al.), each in the forms that the paper compares: the
// selector/actor class form, the lambda form, a plain one-sided MPI-3 RMA form without
// aggregation (the paper's OpenSHMEM versions), bulk-synchronous MPI (alltoallv_exchange.hpp),
// the baseline an MPI programmer writes, and a sequential reference for checking. The apps in
// this folder and bench/pgas run them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "troupe/pgas/world.hpp"

namespace bale {

/// The ways to run a kernel: HClib-Actor's selector and lambda forms, one-sided MPI-3 RMA (one
/// call per element), and bulk-synchronous MPI (buckets exchanged with MPI_Alltoallv).
enum class form { selector, lambda, rma, alltoallv };
/// The forms every kernel has.
inline constexpr form all_forms[] = {form::selector, form::lambda, form::rma, form::alltoallv};
std::string name(form which);
/// The form called `text`; throws std::invalid_argument naming the choices.
form form_named(const std::string& text);

// -- histogram: table[index[i]] += 1, the table partitioned cyclically over the PEs --------------

/// This PE's updates: global table indices in [0, table_per_pe * npes), from `seed`.
std::vector<std::int64_t> histogram_updates(const troupe::pgas::world& world, std::int64_t updates,
                                            std::int64_t table_per_pe, std::uint64_t seed);

/// Adds `sign` to table[g / npes] on PE g % npes for each global index g in `updates`; returns
/// once every PE's updates are in every table.
void histogram(troupe::pgas::world& world, form how, std::span<const std::int64_t> updates,
               std::vector<std::int64_t>& table, std::int64_t sign = 1);

/// The check: the updates added, then subtracted with the same form, leave all zero;
/// and the sum over all tables after adding is the number of updates. Empty when right.
std::string check_histogram(troupe::pgas::world& world, form how,
                            std::span<const std::int64_t> updates, std::int64_t table_per_pe);

// -- index-gather: target[i] = table[index[i]], the table partitioned cyclically -----------------

/// The value that global index `g` holds: a closed form, so results check without a gather.
constexpr std::int64_t table_value(std::int64_t g) {
  return 3 * g + 7;
}

/// This PE's part of the table: table[l] = table_value(l * npes + pe).
std::vector<std::int64_t> gather_table(const troupe::pgas::world& world, std::int64_t table_per_pe);

/// Reads: global indices in [0, table_per_pe * npes), from `seed`.
std::vector<std::int64_t> gather_reads(const troupe::pgas::world& world, std::int64_t reads,
                                       std::int64_t table_per_pe, std::uint64_t seed);

/// target[i] = the table's value at global index reads[i].
void index_gather(troupe::pgas::world& world, form how, std::span<const std::int64_t> reads,
                  const std::vector<std::int64_t>& table, std::vector<std::int64_t>& target);

/// Empty when target[i] == table_value(reads[i]) for every i; else what is wrong, where.
std::string check_gather(std::span<const std::int64_t> reads, std::span<const std::int64_t> target);

// -- random permutation: dart throwing into a table of twice the size, then compaction -----------

/// This PE's part of a random permutation of 0 .. items_per_pe * npes - 1 (PE p starts with
/// items p * items_per_pe ..); the parts, in PE order, are the permutation.
std::vector<std::int64_t> random_permutation(troupe::pgas::world& world, form how,
                                             std::int64_t items_per_pe, std::uint64_t seed);

/// Empty when the parts of all PEs together hold every item exactly once.
std::string check_permutation(troupe::pgas::world& world, std::span<const std::int64_t> part,
                              std::int64_t items_per_pe);

// -- sparse matrices: rows cyclic over the PEs (global row r on PE r % npes, at r / npes) ------

/// This PE's rows of a square sparse matrix in compressed sparse row form, columns sorted.
struct sparse_rows {
  std::int64_t columns = 0;              ///< of the whole matrix (= its rows)
  std::vector<std::int64_t> offsets{0};  ///< row l's columns are cols[offsets[l] .. offsets[l+1])
  std::vector<std::int64_t> cols;
  std::size_t rows() const noexcept { return offsets.size() - 1; }
  /// Local row `local`'s columns.
  std::span<const std::int64_t> row(std::size_t local) const noexcept {
    const auto start = static_cast<std::size_t>(offsets[local]);
    return std::span<const std::int64_t>{cols}.subspan(
        start, static_cast<std::size_t>(offsets[local + 1]) - start);
  }
  /// One value per nonzero, in order: `of_row(l)` for each nonzero of local row l.
  template <class OfRow>
  std::vector<std::int64_t> per_nonzero(OfRow&& of_row) const {
    std::vector<std::int64_t> values(cols.size());
    for (std::size_t l = 0; l < rows(); ++l)
      std::fill(values.begin() + offsets[l], values.begin() + offsets[l + 1], of_row(l));
    return values;
  }
  bool operator==(const sparse_rows&) const = default;
};

/// One nonzero on its way to the PE that owns its row: the row's local index there, the column.
struct matrix_entry {
  std::int64_t row;
  std::int64_t col;
};

/// `rows` rows of a matrix of `columns` columns from its nonzeros, in any order.
sparse_rows rows_from_entries(std::int64_t columns, std::size_t rows,
                              std::span<const matrix_entry> entries);

/// An Erdős–Rényi ("flat") matrix: each row has `nonzeros_per_row` distinct random columns.
sparse_rows random_matrix(const troupe::pgas::world& world, std::int64_t rows_per_pe,
                          std::int64_t nonzeros_per_row, std::uint64_t seed);

/// This PE's rows of the transpose of the matrix whose rows `matrix` holds.
sparse_rows transpose(troupe::pgas::world& world, form how, const sparse_rows& matrix);

/// This PE's rows of the transpose of random_matrix(world, rows_per_pe, nonzeros_per_row, seed),
/// made on this PE alone from every PE's rows (regenerated from their seeds), with no message:
/// the reference that transpose is checked against.
sparse_rows sequential_transpose(const troupe::pgas::world& world, std::int64_t rows_per_pe,
                                 std::int64_t nonzeros_per_row, std::uint64_t seed);

/// Empty if `transposed` is `reference`; else which row differs.
std::string check_transpose(const troupe::pgas::world& world, const sparse_rows& transposed,
                            const sparse_rows& reference);

/// This PE's part of a random permutation of 0 .. count - 1, laid out cyclically (element i on
/// PE i % npes at i / npes), from `seed`; with `inverse`, the inverse permutation's part.
std::vector<std::int64_t> cyclic_permutation(const troupe::pgas::world& world, std::int64_t count,
                                             std::uint64_t seed, bool inverse = false);

/// The whole random permutation that cyclic_permutation takes its parts from.
std::vector<std::int64_t> whole_permutation(std::int64_t count, std::uint64_t seed);

/// A hash of (row, column): a sum of it over all nonzeros fingerprints a matrix.
constexpr std::uint64_t entry_hash(std::int64_t row, std::int64_t col) {
  std::uint64_t x = static_cast<std::uint64_t>(row) * 0x9E3779B97F4A7C15ull ^
                    static_cast<std::uint64_t>(col) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 31;
  return x * 0xBF58476D1CE4E5B9ull;
}

/// Empty when B (`permuted`) holds exactly the nonzeros of A (`matrix`) mapped by the whole
/// permutations `row_of` and `column_of`, compared by a fingerprint summed over all PEs.
std::string check_permuted(troupe::pgas::world& world, const sparse_rows& matrix,
                           const sparse_rows& permuted, std::span<const std::int64_t> row_of,
                           std::span<const std::int64_t> column_of);

/// This PE's rows of B with B[rows[i]][columns[j]] = A[i][j]: `matrix` holds A's rows, `rows` and
/// `columns` this PE's cyclic parts of the two permutations.
sparse_rows permute(troupe::pgas::world& world, form how, const sparse_rows& matrix,
                    std::span<const std::int64_t> rows, std::span<const std::int64_t> columns);

// -- toposort: the row and column permutations that make a permuted triangular matrix triangular

/// This PE's rows of a random upper-triangular matrix of rows_per_pe * npes rows, with a full
/// diagonal and up to `nonzeros_per_row` - 1 random nonzeros right of it per row, whose rows
/// and columns were then randomly permuted.
sparse_rows toposort_input(troupe::pgas::world& world, std::int64_t rows_per_pe,
                           std::int64_t nonzeros_per_row, std::uint64_t seed);

/// This PE's cyclic parts of the two permutations that toposort finds, in the form that
/// permute() takes: row l * npes + pe moves to rows[l], column l * npes + pe to columns[l].
struct toposort_permutations {
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> columns;
};

/// Permutations that make the matrix upper-triangular with a full diagonal: `matrix` holds
/// this PE's rows, `transposed` those of its transpose. Rows that can never be placed (the
/// matrix is no permuted triangular one) keep the position -1.
toposort_permutations toposort(troupe::pgas::world& world, form how, const sparse_rows& matrix,
                               const sparse_rows& transposed);

/// Empty when `order` holds two permutations that make the matrix upper-triangular with a full
/// diagonal; else the first thing wrong, the same text on every PE.
std::string check_toposort(troupe::pgas::world& world, const sparse_rows& matrix,
                           const toposort_permutations& order);

// -- triangle counting: the triangles of an undirected graph, from its lower triangle L -------

/// Calls visit(a_index, b_index) for every value that the sorted sequences `a` and `b` share.
/// A merge when their lengths are alike; binary searches of the longer when one is much shorter
/// (a short row against a hub's).
template <class Visit>
void for_each_common(std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                     Visit&& visit) {
  if (a.size() * 8 < b.size() || b.size() * 8 < a.size()) {
    const bool a_shorter = a.size() < b.size();
    const auto shorter = a_shorter ? a : b;
    const auto longer = a_shorter ? b : a;
    auto from = longer.begin();
    for (std::size_t s = 0; s < shorter.size(); ++s) {
      from = std::lower_bound(from, longer.end(), shorter[s]);
      if (from == longer.end()) return;
      if (*from != shorter[s]) continue;
      const auto l = static_cast<std::size_t>(from - longer.begin());
      if (a_shorter)
        visit(s, l);
      else
        visit(l, s);
    }
    return;
  }
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      visit(i++, j++);
    }
  }
}

/// How many values the sorted sequences `a` and `b` share. When their lengths are alike, a merge
/// without branches on the values: those are as good as random, and mispredicted branches would
/// cost more than the comparisons.
inline std::int64_t count_common(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  std::int64_t common = 0;
  if (a.size() * 8 < b.size() || b.size() * 8 < a.size()) {
    for_each_common(a, b, [&](std::size_t, std::size_t) { ++common; });
    return common;
  }
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const std::int64_t x = a[i];
    const std::int64_t y = b[j];
    common += x == y;
    i += x <= y;
    j += y <= x;
  }
  return common;
}

/// The triangles of the graph whose lower triangle L has this PE's rows in `lower` (row v holds
/// the neighbours w < v), the same on every PE: the sum over the nonzeros L[i][j] of the columns
/// that rows i and j share, each triangle i > j > k counted once, at its edge (i, j).
std::int64_t triangles(troupe::pgas::world& world, form how, const sparse_rows& lower);

/// The same count, sequentially, from every row of L (lower_triangle(spec, 0, 1)).
std::int64_t triangles_reference(const sparse_rows& lower);

// -- sequential references -------------------------------------------------------------------

/// The whole histogram of every PE's updates, computed on one PE from the same seeds.
std::vector<std::int64_t> histogram_reference(int npes, std::int64_t updates,
                                              std::int64_t table_per_pe, std::uint64_t seed);

}  // namespace bale
