// Random undirected graphs for the graph kernels (triangles, centrality, Jaccard, PageRank), as
// bale generates them: Erdős–Rényi ("flat"), random geometric, and Kronecker products of stars.
// A graph is the lower triangle L of its adjacency matrix (row v holds its neighbours w < v),
// rows cyclic over the PEs like every matrix here. Every row is drawn from (seed, row) alone, so
// a graph does not depend on the number of PEs, and sequential references can redraw it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace bale {

enum class graph_model { flat, geometric, kronecker };
std::string name(graph_model model);
/// The model called `text`; throws std::invalid_argument naming the choices.
graph_model graph_model_named(const std::string& text);

/// What to draw: `vertices` vertices of mean degree about `degree` (flat, geometric), or the
/// product of the stars K_{1,m} for m in `stars` (kronecker; it fixes both).
struct graph_spec {
  graph_model model = graph_model::flat;
  std::int64_t vertices = 0;
  std::int64_t degree = 0;
  std::vector<std::int64_t> stars;
  std::uint64_t seed = 1;
};

/// Star sizes whose Kronecker product has about `vertices` vertices and mean degree `degree`:
/// k = log2(degree) factors (each about doubles the mean degree) of equal size.
std::vector<std::int64_t> kronecker_stars(std::int64_t vertices, std::int64_t degree);

/// The number of vertices of the graph `spec` describes.
std::int64_t vertex_count(const graph_spec& spec);

/// The rows of L that PE `pe` of `npes` holds: v = pe, pe + npes, ... < vertex_count(spec).
sparse_rows lower_triangle(const graph_spec& spec, int pe, int npes);
/// This PE's rows of L.
sparse_rows lower_triangle(const troupe::pgas::world& world, const graph_spec& spec);

/// Triangles of the Kronecker graph of `stars`, in closed form. Each factor is a star with a
/// loop at its centre (trace(A_i^3) = 1 + 3 m_i closed 3-walks); the product keeps one loop, at
/// the all-centre vertex z, which is removed. The 3-walks through that loop are 1 + 3 (deg z),
/// deg z = prod(m_i + 1) - 1, and every triangle is six closed 3-walks:
///   triangles = (prod(1 + 3 m_i) - 1 - 3 (prod(m_i + 1) - 1)) / 6.
std::int64_t kronecker_triangles(std::span<const std::int64_t> stars);

/// This PE's rows of the whole adjacency matrix L + L^T (all neighbours, sorted).
sparse_rows adjacency(troupe::pgas::world& world, const sparse_rows& lower);

}  // namespace bale
