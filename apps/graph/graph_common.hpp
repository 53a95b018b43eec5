// What the graph kernels share: the whole graph on one PE, for their sequential references.
#pragma once

#include "graphs.hpp"
#include "kernels.hpp"

namespace graph {

/// Every row of the adjacency matrix L + L^T of the graph `spec` describes, drawn on this PE
/// alone: the input of the sequential references.
bale::sparse_rows whole_adjacency(const bale::graph_spec& spec);

}  // namespace graph
