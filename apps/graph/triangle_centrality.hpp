// Triangle centrality (Burkhardt, "Triangle centrality", 2021): a vertex is central when many
// triangles lie around it, its own and its neighbours'. With t(v) the triangles at v, T those
// of the graph, N_Δ(v) the neighbours that share a triangle with v and N⁺_Δ(v) = N_Δ(v) ∪ {v}:
//   TC(v) = ( (1/3) Σ_{u ∈ N⁺_Δ(v)} t(u) + Σ_{w ∈ N(v) \ N_Δ(v)} t(w) ) / T.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graphs.hpp"
#include "kernels.hpp"
#include "troupe/pgas/world.hpp"

namespace graph {

/// The triangle centrality of this PE's vertices (global v = l * npes + pe at l), with its parts.
struct triangle_centrality_result {
  std::vector<std::int64_t> triangles;  ///< t(v) of each vertex here
  std::vector<double> centrality;       ///< TC(v); 0 when the graph has no triangle (T = 0)
  std::int64_t total = 0;               ///< T, the same on every PE
};

/// TC of this PE's vertices: `lower` holds its rows of the graph's lower triangle L (row v holds
/// the neighbours w < v).
triangle_centrality_result triangle_centrality(troupe::pgas::world& world, bale::form how,
                                               const bale::sparse_rows& lower);

/// TC of every vertex, sequentially and straight from the definition, from every row of the
/// adjacency matrix (whole_adjacency).
std::vector<double> triangle_centrality_reference(const bale::sparse_rows& whole);

/// Empty when every TC(v) here is within 1e-9 (relative) of `reference`, which holds every
/// vertex's; else how many are not, and the largest error with its vertex, the same on every PE.
std::string check_triangle_centrality(troupe::pgas::world& world,
                                      const triangle_centrality_result& result,
                                      std::span<const double> reference);

}  // namespace graph
