// Triangle centrality in three exchanges over the nonzeros of L (rows cyclic over the PEs):
//  1. support: for each nonzero L[i][j], the columns k < j that rows i and j share are the
//     triangles i > j > k at that edge; each adds 1 to the support of its edges (i, j), (i, k)
//     (row i, at the sender) and (j, k) (row j, at the receiver).
//  2. counts: 2 t(v) is the support summed over v's edges; the upper end of an edge has it in its
//     row, the lower end gets it sent.
//  3. sums: each edge (i, j) carries t(i) to j and t(j) back to i, weighted 1 (a third) when the
//     edge lies on a triangle and 3 otherwise, so that 3 T TC(v) is a whole number.
// The actor forms push, as triangle counting does: in exchange 1, row i's columns below j go to
// row j's owner as variable-size messages (the selector) or as a lambda's data (the lambda form),
// in pieces when too long, and the shared columns' nonzeros come back the same way; exchanges 2
// and 3 send fixed-size messages or lambdas. The one-sided form pulls rows and counts with
// blocking gets and adds with MPI_Accumulate. The bulk-synchronous form asks a question per
// wedge in exchange 1 (by_alltoallv says how) and buckets the messages of 2 and 3.
#include "triangle_centrality.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "alltoallv_exchange.hpp"
#include "graph_common.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"
#include "wedge_cursor.hpp"

namespace graph {

namespace pgas = troupe::pgas;
using bale::form;
using bale::sparse_rows;

namespace {

// What the exchanges build on one PE.
struct centrality_parts {
  const sparse_rows* lower;
  std::int64_t npes;
  std::vector<std::int64_t> support;  // per nonzero of L: the triangles on its edge
  std::vector<std::int64_t> doubled;  // per row: 2 t(v)
  std::vector<std::int64_t> sums;     // per row: 3 T TC(v) - t(v), the neighbours' part
  std::vector<std::int64_t> reply;    // the lambda form's replies: handlers never nest
  std::vector<std::int64_t> triangles() const {
    std::vector<std::int64_t> t(doubled.size());
    for (std::size_t l = 0; l < t.size(); ++l) t[l] = doubled[l] / 2;
    return t;
  }
  // In units of thirds: a neighbour on a shared triangle counts t / 3, any other t.
  std::int64_t weight(std::size_t nonzero) const { return support[nonzero] > 0 ? 1 : 3; }
};

// The support exchange's request: [row j's local index, the nonzero (i, j) at the sender, the
// first column's nonzero there, columns of row i below j...]; its reply: [the nonzero (i, j),
// the nonzeros (i, k) of the shared columns...].
constexpr std::size_t request_header = 3;

// Phase 3's message: a request adds `weight` x `triangles` (t(i)) to row `row` and asks for t of
// that row; the reply adds weight x t(j) to the sender's row `reply_row`.
struct neighbour_sum {
  std::int64_t row;
  std::int64_t reply_row;
  std::int64_t weight;
  std::int64_t triangles;
};

void by_selector(pgas::world& world, centrality_parts& parts) {
  const sparse_rows& lower = *parts.lower;
  const std::int64_t npes = parts.npes;
  {
    using support_selector = pgas::selector<2, std::vector<std::int64_t>>;
    support_selector* self = nullptr;
    std::vector<std::int64_t> reply;  // handlers never nest, so one buffer serves them all
    support_selector support{world,
                             {[&](std::span<const std::int64_t> request, int from) {
                                const auto j_local = static_cast<std::size_t>(request[0]);
                                const std::int64_t row_start = lower.offsets[j_local];
                                reply.assign(1, request[1]);
                                bale::for_each_common(
                                    request.subspan(request_header), lower.row(j_local),
                                    [&](std::size_t at_i, std::size_t at_j) {
                                      ++parts.support[static_cast<std::size_t>(row_start) + at_j];
                                      reply.push_back(request[2] + static_cast<std::int64_t>(at_i));
                                    });
                                if (reply.size() > 1) self->send(1, from, reply);
                              },
                              [&](std::span<const std::int64_t> shared, int) {
                                parts.support[static_cast<std::size_t>(shared[0])] +=
                                    static_cast<std::int64_t>(shared.size() - 1);
                                for (std::int64_t nonzero : shared.subspan(1))
                                  ++parts.support[static_cast<std::size_t>(nonzero)];
                              }}};
    self = &support;
    const std::size_t most =
        world.transport().max_payload() / sizeof(std::int64_t) - request_header;
    std::vector<std::int64_t> request;
    for (std::size_t l = 0; l < lower.rows(); ++l) {
      const auto row = lower.row(l);
      const std::int64_t row_start = lower.offsets[l];
      for (std::size_t p = 1; p < row.size(); ++p) {
        const int owner = static_cast<int>(row[p] % npes);
        for (std::size_t from = 0; from < p; from += most) {
          const std::size_t count = std::min(most, p - from);
          request.assign({row[p] / npes, row_start + static_cast<std::int64_t>(p),
                          row_start + static_cast<std::int64_t>(from)});
          request.insert(request.end(), row.begin() + static_cast<std::ptrdiff_t>(from),
                         row.begin() + static_cast<std::ptrdiff_t>(from + count));
          support.send(0, owner, request);
        }
      }
    }
    support.done(0);
    support.wait();
  }
  {
    pgas::actor<bale::matrix_entry> counts{world, [&](const bale::matrix_entry& edge, int) {
                                             parts.doubled[static_cast<std::size_t>(edge.row)] +=
                                                 edge.col;
                                           }};
    for (std::size_t l = 0; l < lower.rows(); ++l)
      for (auto k = static_cast<std::size_t>(lower.offsets[l]);
           k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
        if (parts.support[k] == 0) continue;
        parts.doubled[l] += parts.support[k];
        counts.send(static_cast<int>(lower.cols[k] % npes),
                    bale::matrix_entry{lower.cols[k] / npes, parts.support[k]});
      }
    counts.done();
    counts.wait();
  }
  const std::vector<std::int64_t> t = parts.triangles();
  {
    pgas::selector<2, neighbour_sum>* self = nullptr;
    pgas::selector<2, neighbour_sum> sums{
        world,
        {[&](const neighbour_sum& request, int from) {
           const auto j_local = static_cast<std::size_t>(request.row);
           parts.sums[j_local] += request.weight * request.triangles;
           self->send(1, from, neighbour_sum{request.reply_row, 0, request.weight, t[j_local]});
         },
         [&](const neighbour_sum& reply, int) {
           parts.sums[static_cast<std::size_t>(reply.row)] += reply.weight * reply.triangles;
         }}};
    self = &sums;
    for (std::size_t l = 0; l < lower.rows(); ++l)
      for (auto k = static_cast<std::size_t>(lower.offsets[l]);
           k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k)
        sums.send(0, static_cast<int>(lower.cols[k] % npes),
                  neighbour_sum{lower.cols[k] / npes, static_cast<std::int64_t>(l), parts.weight(k),
                                t[l]});
    sums.done(0);
    sums.wait();
  }
}

void by_lambda(pgas::world& world, centrality_parts& parts) {
  const sparse_rows& lower = *parts.lower;
  const std::int64_t npes = parts.npes;
  using actor_type = pgas::lambda_actor<centrality_parts>;
  {
    // The selector's request as a lambda: row j's local index and the nonzeros of (i, j) and of
    // the piece's first column in the captures, the piece as its data. The reply carries the
    // nonzeros (i, k) of the shared columns as its data.
    auto count_shared = [](std::int64_t j_local, std::int64_t at_j, std::int64_t at_first) {
      return
          [j_local, at_j, at_first](centrality_parts& there, std::span<const std::int64_t> columns,
                                    actor_type::context& back) {
            const std::int64_t row_start = there.lower->offsets[j_local];
            std::vector<std::int64_t>& shared = there.reply;
            shared.clear();
            bale::for_each_common(columns, there.lower->row(static_cast<std::size_t>(j_local)),
                                  [&](std::size_t at_i, std::size_t at_j_row) {
                                    ++there.support[static_cast<std::size_t>(
                                        row_start + static_cast<std::int64_t>(at_j_row))];
                                    shared.push_back(at_first + static_cast<std::int64_t>(at_i));
                                  });
            if (shared.empty()) return;
            back.send(back.from(), shared,
                      [at_j](centrality_parts& here, std::span<const std::int64_t> nonzeros) {
                        here.support[static_cast<std::size_t>(at_j)] +=
                            static_cast<std::int64_t>(nonzeros.size());
                        for (std::int64_t nonzero : nonzeros)
                          ++here.support[static_cast<std::size_t>(nonzero)];
                      });
          };
    };
    actor_type support{world, parts};
    const std::size_t most = support.max_elements<std::int64_t>(count_shared(0, 0, 0));
    for (std::size_t l = 0; l < lower.rows(); ++l) {
      const auto row = lower.row(l);
      const std::int64_t row_start = lower.offsets[l];
      for (std::size_t p = 1; p < row.size(); ++p) {
        const int owner = static_cast<int>(row[p] % npes);
        for (std::size_t from = 0; from < p; from += most)
          support.send(owner, row.subspan(from, std::min(most, p - from)),
                       count_shared(row[p] / npes, row_start + static_cast<std::int64_t>(p),
                                    row_start + static_cast<std::int64_t>(from)));
      }
    }
    support.done();
    support.wait();
  }
  {
    actor_type counts{world, parts};
    for (std::size_t l = 0; l < lower.rows(); ++l)
      for (auto k = static_cast<std::size_t>(lower.offsets[l]);
           k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
        const std::int64_t support = parts.support[k];
        if (support == 0) continue;
        parts.doubled[l] += support;
        const std::int64_t j_local = lower.cols[k] / npes;
        counts.send(static_cast<int>(lower.cols[k] % npes),
                    [j_local, support](centrality_parts& there) {
                      there.doubled[static_cast<std::size_t>(j_local)] += support;
                    });
      }
    counts.done();
    counts.wait();
  }
  {
    actor_type sums{world, parts};
    for (std::size_t l = 0; l < lower.rows(); ++l)
      for (auto k = static_cast<std::size_t>(lower.offsets[l]);
           k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
        const std::int64_t j_local = lower.cols[k] / npes;
        const auto i_local = static_cast<std::int64_t>(l);
        const std::int64_t weight = parts.weight(k);
        const std::int64_t t_i = parts.doubled[l] / 2;
        sums.send(
            static_cast<int>(lower.cols[k] % npes),
            [j_local, i_local, weight, t_i](centrality_parts& there, actor_type::context& reply) {
              const auto j = static_cast<std::size_t>(j_local);
              there.sums[j] += weight * t_i;
              const std::int64_t t_j = there.doubled[j] / 2;
              reply.send(reply.from(), [i_local, weight, t_j](centrality_parts& back) {
                back.sums[static_cast<std::size_t>(i_local)] += weight * t_j;
              });
            });
      }
    sums.done();
    sums.wait();
  }
}

// The same three exchanges in bulk-synchronous supersteps. In the first, each wedge (j, k < j)
// of row i asks row j's owner whether row j holds k, as triangle counting's form does; the owner
// adds to the support of (j, k) and answers, and the asker adds to (i, j) and (i, k). In the
// third, the answer to t(i) is t(j).
void by_alltoallv(centrality_parts& parts) {
  const sparse_rows& lower = *parts.lower;
  const std::int64_t npes = parts.npes;
  {
    struct asked_for {
      std::size_t ij, ik;  // the nonzeros (i, j) and (i, k) here
    };
    bale::wedge_cursor wedges{lower};
    std::vector<bale::wedge_query> asked;
    std::vector<asked_for> nonzeros;
    std::vector<int> owners;
    std::vector<std::uint8_t> held;
    bale::alltoallv_exchange<bale::wedge_query> exchange;
    bale::for_each_superstep(bale::wedge_cursor::count(lower), [&](std::size_t begin,
                                                                   std::size_t end) {
      asked.clear();
      nonzeros.clear();
      owners.clear();
      wedges.next(end - begin, [&](std::size_t l, std::size_t p, std::size_t q) {
        const auto row = lower.row(l);
        const auto row_start = static_cast<std::size_t>(lower.offsets[l]);
        asked.push_back({row[p] / npes, row[q]});
        nonzeros.push_back({row_start + p, row_start + q});
        owners.push_back(static_cast<int>(row[p] % npes));
      });
      exchange.bucket(
          asked.size(), [&](std::size_t i) { return owners[i]; },
          [&](std::size_t i) { return asked[i]; });
      const std::span<const bale::wedge_query> received = exchange.exchange();
      held.assign(received.size(), 0);
      for (std::size_t i = 0; i < received.size(); ++i) {
        const auto j_local = static_cast<std::size_t>(received[i].j_local);
        const auto row_j = lower.row(j_local);
        const auto at = std::lower_bound(row_j.begin(), row_j.end(), received[i].k);
        if (at == row_j.end() || *at != received[i].k) continue;
        ++parts.support[static_cast<std::size_t>(lower.offsets[j_local] + (at - row_j.begin()))];
        held[i] = 1;
      }
      const std::vector<std::uint8_t> answers = exchange.reply(std::span<const std::uint8_t>{held});
      for (std::size_t i = 0; i < answers.size(); ++i)
        if (answers[i] != 0) {
          ++parts.support[nonzeros[i].ij];
          ++parts.support[nonzeros[i].ik];
        }
    });
  }
  // The counts, and then the sums, go over the nonzeros of L, a superstep's worth at a time, as
  // amounts added to rows elsewhere.
  struct row_add {
    std::int64_t local;  // the row, at its owner
    std::int64_t amount;
  };
  const std::vector<std::int64_t> row_of =
      lower.per_nonzero([](std::size_t l) { return static_cast<std::int64_t>(l); });
  {
    std::vector<row_add> counts;
    std::vector<int> owners;
    bale::alltoallv_exchange<row_add> exchange;
    bale::for_each_superstep(lower.cols.size(), [&](std::size_t begin, std::size_t end) {
      counts.clear();
      owners.clear();
      for (std::size_t k = begin; k < end; ++k) {
        if (parts.support[k] == 0) continue;
        parts.doubled[static_cast<std::size_t>(row_of[k])] += parts.support[k];
        counts.push_back({lower.cols[k] / npes, parts.support[k]});
        owners.push_back(static_cast<int>(lower.cols[k] % npes));
      }
      exchange.bucket(
          counts.size(), [&](std::size_t i) { return owners[i]; },
          [&](std::size_t i) { return counts[i]; });
      for (const row_add& count : exchange.exchange())
        parts.doubled[static_cast<std::size_t>(count.local)] += count.amount;
    });
  }
  const std::vector<std::int64_t> t = parts.triangles();
  bale::alltoallv_exchange<row_add> exchange;
  std::vector<std::int64_t> t_here;
  bale::for_each_superstep(lower.cols.size(), [&](std::size_t begin, std::size_t end) {
    exchange.bucket(
        end - begin, [&](std::size_t i) { return static_cast<int>(lower.cols[begin + i] % npes); },
        [&](std::size_t i) {
          const std::size_t k = begin + i;
          return row_add{lower.cols[k] / npes,
                         parts.weight(k) * t[static_cast<std::size_t>(row_of[k])]};
        });
    const std::span<const row_add> received = exchange.exchange();
    t_here.resize(received.size());
    for (std::size_t i = 0; i < received.size(); ++i) {
      const auto j_local = static_cast<std::size_t>(received[i].local);
      parts.sums[j_local] += received[i].amount;
      t_here[i] = t[j_local];
    }
    const std::vector<std::int64_t> t_there = exchange.reply(std::span<const std::int64_t>{t_here});
    for (std::size_t i = 0; i < t_there.size(); ++i) {
      const std::size_t k = begin + i;
      parts.sums[static_cast<std::size_t>(row_of[k])] += parts.weight(k) * t_there[i];
    }
  });
}

// Adds what other PEs accumulated into `window` (and this PE's own accumulates) to `into`, once
// every PE's are complete.
void add_accumulated(const bale::rma_window& window, std::vector<std::int64_t>& into) {
  MPI_Win_flush_all(window.get());
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(window.get());
  for (std::size_t i = 0; i < into.size(); ++i) into[i] += window.data()[i];
}

void by_rma(pgas::world&, centrality_parts& parts) {
  const sparse_rows& lower = *parts.lower;
  const std::int64_t npes = parts.npes;
  const std::int64_t one = 1;
  {
    // Reading row j takes two blocking gets (bale::rma_rows); the support of its edges (j, k)
    // grows by remote adds.
    bale::rma_rows rows{lower};
    bale::rma_window added(lower.cols.size(), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<std::int64_t> row_j;
    for (std::size_t l = 0; l < lower.rows(); ++l) {
      const auto row = lower.row(l);
      const auto row_start = static_cast<std::size_t>(lower.offsets[l]);
      for (std::size_t p = 1; p < row.size(); ++p) {
        const int owner = static_cast<int>(row[p] % npes);
        const std::int64_t start = rows.read(owner, row[p] / npes, row_j);
        bale::for_each_common(row.first(p), row_j, [&](std::size_t at_i, std::size_t at_j) {
          ++parts.support[row_start + p];
          ++parts.support[row_start + at_i];
          MPI_Accumulate(&one, 1, MPI_INT64_T, owner, start + static_cast<std::int64_t>(at_j), 1,
                         MPI_INT64_T, MPI_SUM, added.get());
        });
      }
    }
    add_accumulated(added, parts.support);
  }
  {
    bale::rma_window doubled(lower.rows(), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    for (std::size_t l = 0; l < lower.rows(); ++l)
      for (auto k = static_cast<std::size_t>(lower.offsets[l]);
           k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
        if (parts.support[k] == 0) continue;
        parts.doubled[l] += parts.support[k];
        // parts.support stays as it is until the flush: it can be the origin buffer.
        MPI_Accumulate(&parts.support[k], 1, MPI_INT64_T, static_cast<int>(lower.cols[k] % npes),
                       lower.cols[k] / npes, 1, MPI_INT64_T, MPI_SUM, doubled.get());
      }
    add_accumulated(doubled, parts.doubled);
  }
  {
    // t(j) is read with a blocking get; weight x t(i) goes to j with an add, from a buffer of
    // its own per nonzero, which must stay put until the flush.
    const std::vector<std::int64_t> t = parts.triangles();
    bale::rma_window triangles{std::span<const std::int64_t>{t}};
    bale::rma_window sums(lower.rows(), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<std::int64_t> to_neighbour(lower.cols.size());
    for (std::size_t l = 0; l < lower.rows(); ++l)
      for (auto k = static_cast<std::size_t>(lower.offsets[l]);
           k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
        const int owner = static_cast<int>(lower.cols[k] % npes);
        const std::int64_t j_local = lower.cols[k] / npes;
        std::int64_t t_j = 0;
        MPI_Get(&t_j, 1, MPI_INT64_T, owner, j_local, 1, MPI_INT64_T, triangles.get());
        MPI_Win_flush(owner, triangles.get());
        parts.sums[l] += parts.weight(k) * t_j;
        to_neighbour[k] = parts.weight(k) * t[l];
        MPI_Accumulate(&to_neighbour[k], 1, MPI_INT64_T, owner, j_local, 1, MPI_INT64_T, MPI_SUM,
                       sums.get());
      }
    add_accumulated(sums, parts.sums);  // its barrier also ends every read of `triangles`
  }
}

}  // namespace

triangle_centrality_result triangle_centrality(pgas::world& world, form how,
                                               const sparse_rows& lower) {
  centrality_parts parts{&lower,
                         world.npes(),
                         std::vector<std::int64_t>(lower.cols.size(), 0),
                         std::vector<std::int64_t>(lower.rows(), 0),
                         std::vector<std::int64_t>(lower.rows(), 0),
                         {}};
  switch (how) {
    case bale::form::alltoallv:
      by_alltoallv(parts);
      break;
    case form::selector:
      by_selector(world, parts);
      break;
    case form::lambda:
      by_lambda(world, parts);
      break;
    case form::rma:
      by_rma(world, parts);
      break;
  }
  triangle_centrality_result result;
  result.triangles = parts.triangles();
  std::int64_t here = 0;
  for (std::int64_t t : result.triangles) here += t;
  result.total = world.all_reduce(here) / 3;  // each triangle is at three vertices
  result.centrality.assign(lower.rows(), 0.0);
  if (result.total > 0)
    for (std::size_t l = 0; l < lower.rows(); ++l)
      result.centrality[l] = static_cast<double>(parts.sums[l] + result.triangles[l]) /
                             (3.0 * static_cast<double>(result.total));
  return result;
}

std::vector<double> triangle_centrality_reference(const sparse_rows& whole) {
  const std::size_t n = whole.rows();
  // support[e] of the entry e = (v, w): the neighbours of w that are marked as v's.
  std::vector<std::int64_t> support(whole.cols.size(), 0);
  std::vector<std::size_t> marked_by(n, n);
  std::vector<double> t(n, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::int64_t w : whole.row(v)) marked_by[static_cast<std::size_t>(w)] = v;
    std::int64_t at_v = 0;
    for (auto e = static_cast<std::size_t>(whole.offsets[v]);
         e < static_cast<std::size_t>(whole.offsets[v + 1]); ++e) {
      for (std::int64_t u : whole.row(static_cast<std::size_t>(whole.cols[e])))
        if (marked_by[static_cast<std::size_t>(u)] == v) ++support[e];
      at_v += support[e];
    }
    t[v] = static_cast<double>(at_v / 2);  // each triangle at v lies on two of v's edges
  }
  double total = 0;
  for (double each : t) total += each;
  total /= 3;
  std::vector<double> centrality(n, 0.0);
  if (total == 0) return centrality;
  for (std::size_t v = 0; v < n; ++v) {
    double in_triangles = t[v];  // over N⁺_Δ(v), v itself included
    double outside = 0;          // over N(v) \ N_Δ(v)
    for (auto e = static_cast<std::size_t>(whole.offsets[v]);
         e < static_cast<std::size_t>(whole.offsets[v + 1]); ++e) {
      const double t_w = t[static_cast<std::size_t>(whole.cols[e])];
      if (support[e] > 0)
        in_triangles += t_w;
      else
        outside += t_w;
    }
    centrality[v] = (in_triangles / 3 + outside) / total;
  }
  return centrality;
}

std::string check_triangle_centrality(pgas::world& world, const triangle_centrality_result& result,
                                      std::span<const double> reference) {
  constexpr double tolerance = 1e-9;
  mismatch_tally tally{tolerance};
  for (std::size_t l = 0; l < result.centrality.size(); ++l) {
    const std::int64_t v = static_cast<std::int64_t>(l) * world.npes() + world.pe();
    const double found = result.centrality[l];
    const double expected = reference[static_cast<std::size_t>(v)];
    // Relative, but absolute for an expected 0 (TC lies in [0, 1]).
    tally.add(std::abs(found - expected) / (expected == 0 ? 1.0 : std::abs(expected)), found,
              expected, v);
  }
  return tally.report(world, "vertices", "TC");
}

}  // namespace graph
