// The wedges of a lower triangle L, a superstep's worth at a time: each nonzero (i, j) with each
// column k < j of row i, named by row i's local index l and the positions p (of j) and q (of k)
// in that row. The bulk-synchronous forms of triangle counting and triangle centrality ask one
// question per wedge (does row j hold k?) and take their questions from here, in order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.hpp"

namespace bale {

/// A wedge's question to the owner of row j: does row j hold column k?
struct wedge_query {
  std::int64_t j_local;  // row j, at its owner
  std::int64_t k;        // a column of row i below j
};

class wedge_cursor {
 public:
  explicit wedge_cursor(const sparse_rows& lower) : lower_(&lower) {}

  /// The wedges of all of `lower`'s rows.
  static std::size_t count(const sparse_rows& lower) {
    std::size_t wedges = 0;
    for (std::size_t l = 0; l < lower.rows(); ++l)
      wedges += lower.row(l).size() * (lower.row(l).size() - 1) / 2;
    return wedges;
  }

  /// Calls visit(l, p, q) for the next `n` wedges; at least `n` must be left.
  template <class Visit>
  void next(std::size_t n, Visit&& visit) {
    while (n > 0) {
      if (p_ >= lower_->row(l_).size()) {
        ++l_, p_ = 1, q_ = 0;
      } else if (q_ >= p_) {
        ++p_, q_ = 0;
      } else {
        visit(l_, p_, q_++);
        --n;
      }
    }
  }

 private:
  const sparse_rows* lower_;
  std::size_t l_ = 0, p_ = 1, q_ = 0;
};

}  // namespace bale
