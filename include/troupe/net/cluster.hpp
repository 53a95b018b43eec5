#pragma once

#include <cstddef>
#include <memory>

#include "troupe/async/future.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe {

namespace net::detail {
class network;
}  // namespace net::detail

/// The nodes of the MPI job an actor system belongs to: one actor system per MPI process,
/// joined in the system's constructor. Without an MPI launcher, a cluster of one.
class cluster {
 public:
  // -- constructors ---------------------------------------------------------

  explicit cluster(std::weak_ptr<net::detail::network> network, node_id self, node_id size)
      : network_(std::move(network)), self_(self), size_(size) {}

  // -- properties -----------------------------------------------------------

  /// This node: its MPI rank.
  node_id this_node() const noexcept { return self_; }

  /// How many nodes the job has (they are numbered from 0).
  node_id size() const noexcept { return size_; }

  // -- operations -----------------------------------------------------------

  /// Completes when `node` has left the job: when the job ends, for every node together (an
  /// actor system's destructor waits until no node's actors can wake another's). Fails at once
  /// for a node the job does not have.
  future<void> left(node_id node) const;

 private:
  std::weak_ptr<net::detail::network> network_;
  node_id self_;
  node_id size_;
};

}  // namespace troupe
