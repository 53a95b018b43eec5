// The Jaccard index of every edge of an undirected graph (HClib-Actor's Jaccard app):
// J(u, v) = |N(u) ∩ N(v)| / |N(u) ∪ N(v)| = c / (deg u + deg v - c), with c the common
// neighbours. Each form runs on the graph's lower triangle L, rows cyclic over the PEs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graphs.hpp"
#include "kernels.hpp"
#include "troupe/pgas/world.hpp"

namespace graph {

/// J from the common neighbours and the two degrees; the forms and the reference share it, so
/// that equal counts give bit-equal values.
constexpr double jaccard_index(std::int64_t common, std::int64_t degree_u, std::int64_t degree_v) {
  return static_cast<double>(common) / static_cast<double>(degree_u + degree_v - common);
}

/// The Jaccard index of every edge of L on this PE, aligned with `lower.cols`: `lower` holds
/// this PE's rows of L, `adjacency` the same rows of L + L^T (bale::adjacency).
std::vector<double> jaccard(troupe::pgas::world& world, bale::form how,
                            const bale::sparse_rows& lower, const bale::sparse_rows& adjacency);

/// The sequential reference: the Jaccard index of every edge of L in the rows that PE `pe` of
/// `npes` holds, aligned like jaccard()'s result, from the whole adjacency (whole_adjacency).
std::vector<double> jaccard_reference(const bale::sparse_rows& whole, int pe, int npes);

/// Empty when every value is within 1e-12 of `expected`; else how many are not and the worst
/// edge, the same text on every PE.
std::string check_jaccard(troupe::pgas::world& world, const bale::sparse_rows& lower,
                          std::span<const double> values, std::span<const double> expected);

}  // namespace graph
