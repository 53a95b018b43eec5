#pragma once

#include "troupe/core/node_id.hpp"

namespace troupe {

/// The nodes of the MPI job an actor system belongs to: one actor system per MPI process,
/// joined in the system's constructor. Without an MPI launcher, a cluster of one. Nodes leave
/// together, when the job ends (see docs/net.md), so there is no "has left" to wait for.
class cluster {
 public:
  // -- constructors ---------------------------------------------------------

  cluster(node_id self, node_id size) noexcept : self_(self), size_(size) {}

  // -- properties -----------------------------------------------------------

  /// This node: its MPI rank.
  node_id this_node() const noexcept { return self_; }

  /// How many nodes the job has (they are numbered from 0).
  node_id size() const noexcept { return size_; }

 private:
  node_id self_;
  node_id size_;
};

}  // namespace troupe
