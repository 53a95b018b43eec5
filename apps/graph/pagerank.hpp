// PageRank on an undirected graph (each edge both ways), pushed: every vertex sends rank/deg to
// each neighbour, and each vertex sums what it receives. A fixed number of iterations from
// rank 1/n; the rank of vertices without neighbours is spread evenly over all.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graphs.hpp"
#include "kernels.hpp"
#include "troupe/pgas/world.hpp"

namespace graph {

inline constexpr double pagerank_damping = 0.85;

/// The ranks of this PE's vertices (global v = l * npes + pe at l) after `iterations` steps:
/// `adjacency` holds this PE's rows of the whole adjacency matrix L + L^T (bale::adjacency).
std::vector<double> pagerank(troupe::pgas::world& world, bale::form how,
                             const bale::sparse_rows& adjacency, std::int64_t iterations);

/// The sequential reference: the ranks of every vertex, from the whole adjacency.
std::vector<double> pagerank_reference(const bale::sparse_rows& whole, std::int64_t iterations);

/// Empty when every rank is within 1e-9 of `reference` (all vertices' ranks), relatively, and
/// all ranks sum to 1 within 1e-9; else what is wrong, the same text on every PE.
std::string check_pagerank(troupe::pgas::world& world, std::span<const double> ranks,
                           std::span<const double> reference);

}  // namespace graph
