// What the graph kernels share: the whole graph on one PE, for their sequential references.
#pragma once

#include "graphs.hpp"
#include "kernels.hpp"
#include "troupe/pgas/world.hpp"

namespace graph {

/// Every row of the adjacency matrix L + L^T of the graph `spec` describes, drawn on this PE
/// alone: the input of the sequential references.
bale::sparse_rows whole_adjacency(const bale::graph_spec& spec);

/// A value that differs from its reference: how far (in the check's measure), where (a vertex,
/// or an edge's two ends), and the two values.
struct mismatch {
  double error = 0;
  std::int64_t vertex = -1;
  std::int64_t neighbour = -1;  ///< an edge's other end; -1 for a vertex
  double found = 0;
  double expected = 0;
};

/// The largest of every PE's `mine` (the lowest PE's on a tie), the same on every PE, so that
/// PE 0 can report a mismatch that another PE found.
mismatch worst_over_pes(troupe::pgas::world& world, const mismatch& mine);

}  // namespace graph
