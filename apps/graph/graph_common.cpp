#include "graph_common.hpp"

#include <cmath>
#include <limits>

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

mismatch worst_over_pes(troupe::pgas::world& world, const mismatch& mine) {
  using reduction = troupe::pgas::world::reduction;
  // NaN compares false with everything: count it as the worst error there is.
  const double error =
      std::isnan(mine.error) ? std::numeric_limits<double>::infinity() : mine.error;
  const double largest = world.all_reduce(error, reduction::max);
  const int holder = world.all_reduce(error == largest ? world.pe() : world.npes(), reduction::min);
  // Only the holder contributes to the sums below, so they carry its values unchanged.
  const bool here = world.pe() == holder;
  mismatch worst;
  worst.error = largest;
  worst.vertex = world.all_reduce(here ? mine.vertex : std::int64_t{0});
  worst.neighbour = world.all_reduce(here ? mine.neighbour : std::int64_t{0});
  worst.found = world.all_reduce(here ? mine.found : 0.0);
  worst.expected = world.all_reduce(here ? mine.expected : 0.0);
  return worst;
}

}  // namespace graph
