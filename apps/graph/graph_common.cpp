#include "graph_common.hpp"

#include <cmath>
#include <cstdio>
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

void mismatch_tally::add(double error, double found, double expected, std::int64_t vertex,
                         std::int64_t neighbour) {
  if (error <= tolerance_) return;  // false for NaN too
  ++off_;
  // NaN compares false with everything: it counts as the worst error there is.
  if (std::isnan(error)) error = std::numeric_limits<double>::infinity();
  if (error > worst_.error) worst_ = {error, vertex, neighbour, found, expected};
}

std::string mismatch_tally::report(troupe::pgas::world& world, const char* items,
                                   const char* name) const {
  using reduction = troupe::pgas::world::reduction;
  const std::int64_t off = world.all_reduce(off_);
  const double largest = world.all_reduce(worst_.error, reduction::max);
  const int holder =
      world.all_reduce(worst_.error == largest ? world.pe() : world.npes(), reduction::min);
  // Only the holder contributes to the sums below, so they carry its values unchanged.
  const bool here = world.pe() == holder;
  const auto vertex = world.all_reduce(here ? worst_.vertex : std::int64_t{0});
  const auto neighbour = world.all_reduce(here ? worst_.neighbour : std::int64_t{0});
  const double found = world.all_reduce(here ? worst_.found : 0.0);
  const double expected = world.all_reduce(here ? worst_.expected : 0.0);
  if (off == 0) return {};
  char where[64];
  if (neighbour < 0)
    std::snprintf(where, sizeof where, "%lld", static_cast<long long>(vertex));
  else
    std::snprintf(where, sizeof where, "%lld, %lld", static_cast<long long>(vertex),
                  static_cast<long long>(neighbour));
  char text[256];
  std::snprintf(text, sizeof text,
                "%lld %s off by more than %g; worst: %s(%s) = %.17g, reference %.17g",
                static_cast<long long>(off), items, tolerance_, name, where, found, expected);
  return text;
}

}  // namespace graph
