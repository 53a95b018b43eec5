// PageRank, pushed along every edge both ways. Each iteration, every vertex w with neighbours
// sends share(w) = rank(w) / deg(w) to each neighbour v; then
//   rank'(v) = (1 - d) / n + d (dangling / n + sum of the shares v received),
// with `dangling` the rank of vertices without neighbours, summed over all PEs.
// - selector, lambda: one aggregated message (a struct, or a lambda) per edge and direction.
// - rma: one MPI_Accumulate per edge and direction into the owner's window (no aggregation).
// - alltoallv: the shares bucketed by owner, exchanged in bulk-synchronous supersteps.
#include "pagerank.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "alltoallv_exchange.hpp"
#include "graph_common.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace graph {

namespace pgas = troupe::pgas;
using bale::sparse_rows;

namespace {

// A share on its way to the PE that owns its vertex, and the vertex's local index there.
struct share_message {
  std::int64_t local;
  double share;
};

// The rank that every vertex gets for sure: teleport, plus the evenly spread dangling rank.
double base_rank(double vertices, double dangling) {
  return (1 - pagerank_damping) / vertices + pagerank_damping * dangling / vertices;
}

}  // namespace

std::vector<double> pagerank(pgas::world& world, bale::form how, const sparse_rows& adjacency,
                             std::int64_t iterations) {
  const std::int64_t npes = world.npes();
  const std::size_t rows = adjacency.rows();
  const auto vertices = static_cast<double>(adjacency.columns);
  std::vector<double> ranks(rows, 1 / vertices);
  std::vector<double> shares(rows);
  std::vector<double> incoming(rows);
  // The rma form's window of incoming sums, created once: MPI_Win_allocate is a collective.
  std::optional<bale::rma_window> sums;
  if (how == bale::form::rma) sums.emplace(std::max<std::size_t>(rows, 1));
  // The alltoallv form's exchange, and the row of each edge: its supersteps cut rows apart.
  bale::alltoallv_exchange<share_message> exchange;
  std::vector<std::size_t> row_of_edge;
  if (how == bale::form::alltoallv)
    for (std::size_t l = 0; l < rows; ++l)
      row_of_edge.insert(row_of_edge.end(),
                         static_cast<std::size_t>(adjacency.offsets[l + 1] - adjacency.offsets[l]),
                         l);
  auto for_each_push = [&](auto&& push) {
    for (std::size_t l = 0; l < rows; ++l)
      for (std::int64_t k = adjacency.offsets[l]; k < adjacency.offsets[l + 1]; ++k)
        push(l, adjacency.cols[static_cast<std::size_t>(k)]);
  };
  for (std::int64_t iteration = 0; iteration < iterations; ++iteration) {
    double dangling = 0;
    for (std::size_t l = 0; l < rows; ++l) {
      const std::int64_t degree = adjacency.offsets[l + 1] - adjacency.offsets[l];
      if (degree == 0) dangling += ranks[l];
      shares[l] = degree == 0 ? 0.0 : ranks[l] / static_cast<double>(degree);
    }
    dangling = world.all_reduce(dangling);
    std::fill(incoming.begin(), incoming.end(), 0.0);
    switch (how) {
      case bale::form::alltoallv:
        bale::for_each_superstep(row_of_edge.size(), [&](std::size_t begin, std::size_t end) {
          exchange.bucket(
              end - begin,
              [&](std::size_t i) { return static_cast<int>(adjacency.cols[begin + i] % npes); },
              [&](std::size_t i) {
                return share_message{adjacency.cols[begin + i] / npes,
                                     shares[row_of_edge[begin + i]]};
              });
          for (const share_message& message : exchange.exchange())
            incoming[static_cast<std::size_t>(message.local)] += message.share;
        });
        break;
      case bale::form::selector: {
        pgas::actor<share_message> push{world, [&incoming](const share_message& message, int) {
                                          incoming[static_cast<std::size_t>(message.local)] +=
                                              message.share;
                                        }};
        for_each_push([&](std::size_t l, std::int64_t v) {
          push.send(static_cast<int>(v % npes), share_message{v / npes, shares[l]});
        });
        push.done();
        push.wait();
        break;
      }
      case bale::form::lambda: {
        pgas::lambda_actor<std::vector<double>> push{world, incoming};
        for_each_push([&](std::size_t l, std::int64_t v) {
          const std::int64_t local = v / npes;
          const double share = shares[l];
          push.send(static_cast<int>(v % npes), [local, share](std::vector<double>& into) {
            into[static_cast<std::size_t>(local)] += share;
          });
        });
        push.done();
        push.wait();
        break;
      }
      case bale::form::rma: {
        std::fill(sums->data(), sums->data() + rows, 0);  // all bits zero: 0.0
        MPI_Win_sync(sums->get());
        MPI_Barrier(MPI_COMM_WORLD);  // every window is zero before any share lands
        // shares[l] stays unchanged until the flush below, as an origin buffer must.
        for_each_push([&](std::size_t l, std::int64_t v) {
          MPI_Accumulate(&shares[l], 1, MPI_DOUBLE, static_cast<int>(v % npes), v / npes, 1,
                         MPI_DOUBLE, MPI_SUM, sums->get());
        });
        MPI_Win_flush_all(sums->get());
        MPI_Barrier(MPI_COMM_WORLD);  // every PE's shares are in every window
        MPI_Win_sync(sums->get());
        if (rows > 0) std::memcpy(incoming.data(), sums->data(), rows * sizeof(double));
        break;
      }
    }
    const double base = base_rank(vertices, dangling);
    for (std::size_t l = 0; l < rows; ++l) ranks[l] = base + pagerank_damping * incoming[l];
  }
  return ranks;
}

std::vector<double> pagerank_reference(const sparse_rows& whole, std::int64_t iterations) {
  const std::size_t n = whole.rows();
  const auto vertices = static_cast<double>(n);
  std::vector<double> ranks(n, 1 / vertices);
  std::vector<double> shares(n);
  for (std::int64_t iteration = 0; iteration < iterations; ++iteration) {
    double dangling = 0;
    for (std::size_t v = 0; v < n; ++v) {
      const std::int64_t degree = whole.offsets[v + 1] - whole.offsets[v];
      if (degree == 0) dangling += ranks[v];
      shares[v] = degree == 0 ? 0.0 : ranks[v] / static_cast<double>(degree);
    }
    const double base = base_rank(vertices, dangling);
    // Pulled rather than pushed: the graph is undirected, so v receives from each neighbour.
    for (std::size_t v = 0; v < n; ++v) {
      double incoming = 0;
      for (std::int64_t k = whole.offsets[v]; k < whole.offsets[v + 1]; ++k)
        incoming += shares[static_cast<std::size_t>(whole.cols[static_cast<std::size_t>(k)])];
      ranks[v] = base + pagerank_damping * incoming;
    }
  }
  return ranks;
}

std::string check_pagerank(pgas::world& world, std::span<const double> ranks,
                           std::span<const double> reference) {
  constexpr double tolerance = 1e-9;
  const std::size_t npes = static_cast<std::size_t>(world.npes());
  const std::size_t pe = static_cast<std::size_t>(world.pe());
  const std::size_t mine = reference.size() > pe ? (reference.size() - pe - 1) / npes + 1 : 0;
  if (world.all_reduce(std::int64_t{ranks.size() != mine}) != 0)
    return "the ranks do not match the vertices in number";
  double sum = 0;
  mismatch_tally tally{tolerance};
  for (std::size_t l = 0; l < ranks.size(); ++l) {
    const std::size_t v = l * npes + pe;
    sum += ranks[l];
    tally.add(std::abs(ranks[l] - reference[v]) / reference[v], ranks[l], reference[v],
              static_cast<std::int64_t>(v));
  }
  sum = world.all_reduce(sum);
  if (std::string off = tally.report(world, "ranks", "rank"); !off.empty()) return off;
  if (!(std::abs(sum - 1) <= tolerance)) {
    char text[64];
    std::snprintf(text, sizeof text, "the ranks sum to %.17g, not 1", sum);
    return text;
  }
  return {};
}

}  // namespace graph
