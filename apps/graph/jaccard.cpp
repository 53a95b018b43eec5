// Jaccard index of every edge (v, w) of L (w < v). Counting c needs N(v) and N(w) on one PE;
// the actor forms move the shorter row, so that a hub's row does not go to each of its many
// neighbours (on Kronecker graphs, this sends about a sixth of the words that moving N(w) would):
// first every vertex tells its neighbours its degree, then the end of smaller degree, the pusher,
// sends its row to the other end's owner, which counts c. J lives with the owner of v (L's row),
// so counts found at w's owner go on to v's owner.
// - selector: a row as variable-size messages (pieces when it exceeds one); the counts of a piece
//   go on in a second mailbox.
// - lambda: the same messages as lambdas: the two vertices in the captures, a piece of the row as
//   the lambda's data; a count found at w's owner goes on as a lambda of its own.
// - alltoallv: the same pushes as streams of words [q, p, |N(p)|, N(p)...], bucketed by q's owner
//   and exchanged in bulk-synchronous supersteps; the counts found at q's owner go back to p's in
//   the same superstep.
// - rma: the owner of v reads row w's bounds, then the row, with blocking gets (no aggregation).
#include "jaccard.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "alltoallv_exchange.hpp"
#include "graph_common.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace graph {

namespace pgas = troupe::pgas;
using bale::sparse_rows;

namespace {

// Where `neighbour` sits in local row `local` of `matrix` (it must be there), as an index
// into matrix.cols.
std::size_t entry_index(const sparse_rows& matrix, std::size_t local, std::int64_t neighbour) {
  const auto row = matrix.row(local);
  return static_cast<std::size_t>(
      matrix.offsets[local] + (std::lower_bound(row.begin(), row.end(), neighbour) - row.begin()));
}

// Whether `from` sends its row across edge {from, to}: the end of smaller degree, the lower
// vertex on a tie. Both owners decide the same.
constexpr bool pushes(std::int64_t from, std::int64_t from_degree, std::int64_t to,
                      std::int64_t to_degree) {
  return from_degree < to_degree || (from_degree == to_degree && from < to);
}

// What one PE knows of its vertices and their edges, and what the actor forms count.
struct edge_state {
  const sparse_rows* lower;
  const sparse_rows* adjacency;
  std::int64_t pe, npes;
  std::vector<std::int64_t> neighbour_degree;  // per entry of adjacency.cols
  std::vector<std::int64_t> common;            // per edge of L, as lower.cols

  std::int64_t vertex(std::size_t local) const {
    return static_cast<std::int64_t>(local) * npes + pe;
  }
  std::int64_t degree(std::size_t local) const {
    return adjacency->offsets[local + 1] - adjacency->offsets[local];
  }
  // Records that `neighbour` of local vertex `local` has degree `degree`.
  void learn_degree(std::size_t local, std::int64_t neighbour, std::int64_t degree) {
    neighbour_degree[entry_index(*adjacency, local, neighbour)] = degree;
  }
  // Adds `count` to c of edge (v, w), v being local vertex `local`.
  void add_common(std::size_t local, std::int64_t w, std::int64_t count) {
    common[entry_index(*lower, local, w)] += count;
  }
  // Calls visit(l, k, owner of q, q's local index there) for every entry k of adjacency.cols,
  // neighbour q of local vertex l.
  template <class Visit>
  void for_each_neighbour(Visit&& visit) const {
    for (std::size_t l = 0; l < adjacency->rows(); ++l)
      for (auto k = static_cast<std::size_t>(adjacency->offsets[l]);
           k < static_cast<std::size_t>(adjacency->offsets[l + 1]); ++k) {
        const std::int64_t q = adjacency->cols[k];
        visit(l, k, static_cast<int>(q % npes), q / npes);
      }
  }
  // Calls visit(l, N(p), owner of q, q's local index) for every edge {p, q} that local vertex
  // p = vertex(l) pushes across; neighbour degrees must be known.
  template <class Visit>
  void for_each_push(Visit&& visit) const {
    for_each_neighbour([&](std::size_t l, std::size_t k, int owner, std::int64_t q_local) {
      const std::int64_t q = adjacency->cols[k];
      if (pushes(vertex(l), degree(l), q, neighbour_degree[k]))
        visit(l, adjacency->row(l), owner, q_local);
    });
  }
};

// A vertex's degree, for the owner of a neighbour (its local index there).
struct degree_message {
  std::int64_t local;  // the receiving vertex
  std::int64_t neighbour;
  std::int64_t degree;  // the neighbour's
};

// Common neighbours of edge (local vertex, neighbour), found at the neighbour's owner.
struct edge_count {
  std::int64_t local;
  std::int64_t neighbour;
  std::int64_t count;
};

}  // namespace

std::vector<double> jaccard(pgas::world& world, bale::form how, const sparse_rows& lower,
                            const sparse_rows& adjacency) {
  const std::int64_t npes = world.npes();
  edge_state here{&lower,
                  &adjacency,
                  world.pe(),
                  npes,
                  std::vector<std::int64_t>(adjacency.cols.size(), 0),
                  std::vector<std::int64_t>(lower.cols.size(), 0)};
  std::vector<std::int64_t> lower_degree(lower.cols.size(), 0);  // deg w per edge (v, w) of L
  switch (how) {
    case bale::form::alltoallv: {
      // Degrees: each entry of a row tells that neighbour's owner the row's degree.
      std::vector<std::size_t> row_of_entry;
      for (std::size_t l = 0; l < adjacency.rows(); ++l)
        row_of_entry.insert(row_of_entry.end(), static_cast<std::size_t>(here.degree(l)), l);
      bale::alltoallv_exchange<degree_message> degrees;
      bale::for_each_superstep(row_of_entry.size(), [&](std::size_t begin, std::size_t end) {
        degrees.bucket(
            end - begin,
            [&](std::size_t i) { return static_cast<int>(adjacency.cols[begin + i] % npes); },
            [&](std::size_t i) {
              const std::size_t l = row_of_entry[begin + i];
              return degree_message{adjacency.cols[begin + i] / npes, here.vertex(l),
                                    here.degree(l)};
            });
        for (const degree_message& m : degrees.exchange())
          here.learn_degree(static_cast<std::size_t>(m.local), m.neighbour, m.degree);
      });
      // Rows: a push is the words [q (local), p, |N(p)|, N(p)...] for q's owner, in the
      // superstep of its first word; the counts found where q < p go on to p's owner.
      struct push {
        std::size_t l;
        int owner;
        std::int64_t q_local;
        std::size_t first_word;
      };
      std::vector<push> pushes;
      std::size_t words = 0;
      here.for_each_push([&](std::size_t l, std::span<const std::int64_t> neighbours, int owner,
                             std::int64_t q_local) {
        pushes.push_back({l, owner, q_local, words});
        words += 3 + neighbours.size();
      });
      bale::alltoallv_exchange<std::int64_t> rows;
      bale::alltoallv_exchange<edge_count> counts;
      std::vector<std::int64_t> stream;
      std::vector<int> stream_owner, found_owner;
      std::vector<edge_count> found;
      std::size_t next = 0;
      bale::for_each_superstep(words, [&](std::size_t, std::size_t end) {
        stream.clear();
        for (; next < pushes.size() && pushes[next].first_word < end; ++next) {
          const auto row = adjacency.row(pushes[next].l);
          stream.insert(stream.end(), {pushes[next].q_local, here.vertex(pushes[next].l),
                                       static_cast<std::int64_t>(row.size())});
          stream.insert(stream.end(), row.begin(), row.end());
          stream_owner.resize(stream.size(), pushes[next].owner);
        }
        rows.bucket(
            stream.size(), [&](std::size_t i) { return stream_owner[i]; },
            [&](std::size_t i) { return stream[i]; });
        stream_owner.clear();
        found.clear();
        found_owner.clear();
        const std::span<const std::int64_t> received = rows.exchange();
        for (std::size_t at = 0; at < received.size();) {
          const auto q_local = static_cast<std::size_t>(received[at]);
          const std::int64_t p = received[at + 1];
          const auto length = static_cast<std::size_t>(received[at + 2]);
          const std::int64_t common =
              bale::count_common(received.subspan(at + 3, length), adjacency.row(q_local));
          at += 3 + length;
          const std::int64_t q = here.vertex(q_local);
          if (p < q) {
            here.add_common(q_local, p, common);
          } else if (common > 0) {
            found.push_back({p / npes, q, common});
            found_owner.push_back(static_cast<int>(p % npes));
          }
        }
        counts.bucket(
            found.size(), [&](std::size_t i) { return found_owner[i]; },
            [&](std::size_t i) { return found[i]; });
        for (const edge_count& m : counts.exchange())
          here.add_common(static_cast<std::size_t>(m.local), m.neighbour, m.count);
      });
      break;
    }
    case bale::form::selector: {
      {
        pgas::actor<degree_message> degrees{world, [&](const degree_message& m, int) {
                                              here.learn_degree(static_cast<std::size_t>(m.local),
                                                                m.neighbour, m.degree);
                                            }};
        here.for_each_neighbour([&](std::size_t l, std::size_t, int owner, std::int64_t local) {
          degrees.send(owner, degree_message{local, here.vertex(l), here.degree(l)});
        });
        degrees.done();
        degrees.wait();
      }
      // Mailbox 0, a row: the receiving vertex q (local), the pusher p, a piece of N(p) that
      // fits one message. Mailbox 1, when q < p: c of that piece, for edge (p, q) of L.
      constexpr std::size_t header = 2;
      const std::size_t piece =
          std::max<std::size_t>(1, world.transport().max_payload() / sizeof(std::int64_t) - header);
      using row_selector = pgas::selector<2, std::vector<std::int64_t>>;
      row_selector* self = nullptr;
      row_selector rows{world,
                        {[&](std::span<const std::int64_t> message, int from) {
                           const auto q_local = static_cast<std::size_t>(message[0]);
                           const std::int64_t p = message[1];
                           const std::int64_t q = here.vertex(q_local);
                           const std::int64_t common =
                               bale::count_common(message.subspan(header), adjacency.row(q_local));
                           if (p < q) {
                             here.add_common(q_local, p, common);
                           } else if (common > 0) {
                             const std::int64_t reply[] = {p / npes, q, common};
                             self->send(1, from, reply);
                           }
                         },
                         [&](std::span<const std::int64_t> reply, int) {
                           here.add_common(static_cast<std::size_t>(reply[0]), reply[1], reply[2]);
                         }}};
      self = &rows;
      std::vector<std::int64_t> message;
      here.for_each_push([&](std::size_t l, std::span<const std::int64_t> neighbours, int owner,
                             std::int64_t q_local) {
        for (std::size_t at = 0; at < neighbours.size(); at += piece) {
          message.assign({q_local, here.vertex(l)});
          const auto part = neighbours.subspan(at, std::min(piece, neighbours.size() - at));
          message.insert(message.end(), part.begin(), part.end());
          rows.send(0, owner, message);
        }
      });
      rows.done();
      rows.wait();
      break;
    }
    case bale::form::lambda: {
      using actor_type = pgas::lambda_actor<edge_state>;
      {
        actor_type degrees{world, here};
        here.for_each_neighbour([&](std::size_t l, std::size_t, int owner, std::int64_t local) {
          const std::int64_t neighbour = here.vertex(l);
          const std::int64_t degree = here.degree(l);
          degrees.send(owner, [local, neighbour, degree](edge_state& s) {
            s.learn_degree(static_cast<std::size_t>(local), neighbour, degree);
          });
        });
        degrees.done();
        degrees.wait();
      }
      // A piece of N(p) as a lambda's data: row q's owner counts what the piece shares with
      // N(q) and, when q > p, sends the count on to p's owner.
      actor_type rows{world, here};
      auto count_common_with = [](std::int64_t q_local, std::int64_t p) {
        return [q_local, p](edge_state& s, std::span<const std::int64_t> piece,
                            actor_type::context& at) {
          const auto local = static_cast<std::size_t>(q_local);
          const std::int64_t common = bale::count_common(piece, s.adjacency->row(local));
          const std::int64_t q = s.vertex(local);
          if (p < q) {
            s.add_common(local, p, common);
          } else if (common > 0) {
            const std::int64_t p_local = p / s.npes;
            at.send(at.from(), [p_local, q, common](edge_state& back) {
              back.add_common(static_cast<std::size_t>(p_local), q, common);
            });
          }
        };
      };
      const std::size_t piece = rows.max_elements<std::int64_t>(count_common_with(0, 0));
      here.for_each_push([&](std::size_t l, std::span<const std::int64_t> neighbours, int owner,
                             std::int64_t q_local) {
        for (std::size_t at = 0; at < neighbours.size(); at += piece)
          rows.send(owner, neighbours.subspan(at, std::min(piece, neighbours.size() - at)),
                    count_common_with(q_local, here.vertex(l)));
      });
      rows.done();
      rows.wait();
      break;
    }
    case bale::form::rma: {
      bale::rma_rows rows{adjacency};
      MPI_Barrier(MPI_COMM_WORLD);  // every PE's rows are in its windows before any read
      std::vector<std::int64_t> row_w;
      for (std::size_t l = 0; l < lower.rows(); ++l) {
        for (auto k = static_cast<std::size_t>(lower.offsets[l]);
             k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
          const std::int64_t w = lower.cols[k];
          rows.read(static_cast<int>(w % npes), w / npes, row_w);
          lower_degree[k] = static_cast<std::int64_t>(row_w.size());
          here.common[k] = bale::count_common(row_w, adjacency.row(l));
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);  // no PE reads a window that is freed
      break;
    }
  }
  std::vector<double> values(lower.cols.size());
  for (std::size_t l = 0; l < lower.rows(); ++l)
    for (auto k = static_cast<std::size_t>(lower.offsets[l]);
         k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k) {
      // L's row is the head of the adjacency row, so w's entry there has the same position.
      if (how != bale::form::rma)
        lower_degree[k] = here.neighbour_degree[static_cast<std::size_t>(
            adjacency.offsets[l] + (static_cast<std::int64_t>(k) - lower.offsets[l]))];
      values[k] = jaccard_index(here.common[k], here.degree(l), lower_degree[k]);
    }
  return values;
}

std::vector<double> jaccard_reference(const sparse_rows& whole, int pe, int npes) {
  std::vector<double> values;
  for (auto v = static_cast<std::size_t>(pe); v < whole.rows();
       v += static_cast<std::size_t>(npes)) {
    const auto row_v = whole.row(v);
    for (auto w = row_v.begin(); w != row_v.end() && *w < static_cast<std::int64_t>(v); ++w) {
      const auto row_w = whole.row(static_cast<std::size_t>(*w));
      values.push_back(jaccard_index(bale::count_common(row_v, row_w),
                                     static_cast<std::int64_t>(row_v.size()),
                                     static_cast<std::int64_t>(row_w.size())));
    }
  }
  return values;
}

std::string check_jaccard(pgas::world& world, const sparse_rows& lower,
                          std::span<const double> values, std::span<const double> expected) {
  constexpr double tolerance = 1e-12;
  const bool aligned = values.size() == lower.cols.size() && expected.size() == lower.cols.size();
  if (world.all_reduce(std::int64_t{!aligned}) != 0)
    return "the values do not match the edges in number";
  mismatch_tally tally{tolerance};
  for (std::size_t l = 0; l < lower.rows(); ++l)
    for (auto k = static_cast<std::size_t>(lower.offsets[l]);
         k < static_cast<std::size_t>(lower.offsets[l + 1]); ++k)
      tally.add(std::abs(values[k] - expected[k]), values[k], expected[k],
                static_cast<std::int64_t>(l) * world.npes() + world.pe(), lower.cols[k]);
  return tally.report(world, "edges", "J");
}

}  // namespace graph
