#include "graph_common.hpp"

namespace graph {

bale::sparse_rows whole_adjacency(const bale::graph_spec& spec) {
  const bale::sparse_rows lower = bale::lower_triangle(spec, 0, 1);
  // Count each row's neighbours above it (its column in L), then fill rows: L's part first.
  const std::size_t n = lower.rows();
  std::vector<std::int64_t> degree(n, 0);
  for (std::size_t v = 0; v < n; ++v) {
    degree[v] += lower.offsets[v + 1] - lower.offsets[v];
    for (std::int64_t k = lower.offsets[v]; k < lower.offsets[v + 1]; ++k)
      ++degree[static_cast<std::size_t>(lower.cols[static_cast<std::size_t>(k)])];
  }
  bale::sparse_rows whole;
  whole.columns = lower.columns;
  whole.offsets.assign(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) whole.offsets[v + 1] = whole.offsets[v] + degree[v];
  whole.cols.resize(static_cast<std::size_t>(whole.offsets[n]));
  std::vector<std::int64_t> next(whole.offsets.begin(), whole.offsets.end() - 1);
  // L's entries (all below the row) first, then the rows v above it in increasing order.
  for (std::size_t v = 0; v < n; ++v)
    for (std::int64_t k = lower.offsets[v]; k < lower.offsets[v + 1]; ++k)
      whole.cols[static_cast<std::size_t>(next[v]++)] = lower.cols[static_cast<std::size_t>(k)];
  for (std::size_t v = 0; v < n; ++v)
    for (std::int64_t k = lower.offsets[v]; k < lower.offsets[v + 1]; ++k) {
      const auto w = static_cast<std::size_t>(lower.cols[static_cast<std::size_t>(k)]);
      whole.cols[static_cast<std::size_t>(next[w]++)] = static_cast<std::int64_t>(v);
    }
  return whole;
}

}  // namespace graph
