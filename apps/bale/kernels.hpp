// The bale kernels of HClib-Actor (Paul et al.), each in the forms that the paper compares: the
// selector/actor class form, the lambda form, a plain one-sided MPI-3 RMA form without
// aggregation (the paper's OpenSHMEM versions), and a sequential reference for checking. The
// apps in this folder and bench/pgas run them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "troupe/pgas/world.hpp"

namespace bale {

/// The ways to run a kernel.
enum class form { selector, lambda, rma };
inline constexpr form all_forms[] = {form::selector, form::lambda, form::rma};
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

// -- sequential references -------------------------------------------------------------------

/// The whole histogram of every PE's updates, computed on one PE from the same seeds.
std::vector<std::int64_t> histogram_reference(int npes, std::int64_t updates,
                                              std::int64_t table_per_pe, std::uint64_t seed);

}  // namespace bale
