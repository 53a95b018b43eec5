// What the graph kernels share: the whole graph on one PE, for their sequential references.
#pragma once

#include <string>

#include "graphs.hpp"
#include "kernels.hpp"
#include "troupe/pgas/world.hpp"

namespace graph {

/// Every row of the adjacency matrix L + L^T of the graph `spec` describes, drawn on this PE
/// alone: the input of the sequential references.
bale::sparse_rows whole_adjacency(const bale::graph_spec& spec);

/// What a check found against its sequential reference on this PE: how many values are off by
/// more than the tolerance, and the worst of them, so that PE 0 can report one that another PE
/// found.
class mismatch_tally {
 public:
  explicit mismatch_tally(double tolerance) : tolerance_(tolerance) {}

  /// Records `found` against `expected`, `error` apart (in the check's measure), at `vertex` or
  /// at the edge (vertex, neighbour). A NaN error counts as off.
  void add(double error, double found, double expected, std::int64_t vertex,
           std::int64_t neighbour = -1);

  /// Collective. Empty when no PE found a value off; else how many, and the worst, as
  /// "<count> <items> off by more than <tolerance>; worst: <name>(v[, w]) = x, reference y".
  std::string report(troupe::pgas::world& world, const char* items, const char* name) const;

 private:
  struct mismatch {
    double error = 0;
    std::int64_t vertex = -1;
    std::int64_t neighbour = -1;  // an edge's other end; -1 for a vertex
    double found = 0;
    double expected = 0;
  };
  double tolerance_;
  std::int64_t off_ = 0;
  mismatch worst_;
};

}  // namespace graph
