#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace troupe::pgas {

/// Which mailboxes of a selector feed which: an edge (a, b) says that handlers of mailbox `a`
/// send to mailbox `b`, so `b` becomes done by itself once `a` has terminated everywhere. A
/// mailbox without predecessors is fed from outside, and the user calls done() on it.
class mailbox_graph {
 public:
  /// No edges: every mailbox is fed from outside.
  static mailbox_graph none() { return mailbox_graph{}; }

  /// 0 -> 1 -> ... -> mailboxes-1, the default.
  static mailbox_graph linear(std::size_t mailboxes) {
    mailbox_graph graph;
    for (std::size_t m = 1; m < mailboxes; ++m) graph.edge(m - 1, m);
    return graph;
  }

  /// Adds the edge `from` -> `to`.
  mailbox_graph& edge(std::size_t from, std::size_t to) {
    edges_.emplace_back(from, to);
    return *this;
  }

  const std::vector<std::pair<std::size_t, std::size_t>>& edges() const noexcept { return edges_; }

 private:
  std::vector<std::pair<std::size_t, std::size_t>> edges_;
};

}  // namespace troupe::pgas
