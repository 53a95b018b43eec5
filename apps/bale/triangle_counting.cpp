// Triangle counting (bale's triangle kernel, the push variant of L & L·L). A triangle i > j > k
// of the graph shows at the nonzero L[i][j] as a column k that rows i and j of L share, so the
// count is the sum over L's nonzeros of |row_i ∩ row_j|, the columns below j only. The actor
// forms push row i's columns below j to the owner of row j, which counts those its row holds: the
// selector as a variable-size message (the columns, then j), the lambda form as a lambda that
// carries j and the columns as its data; prefixes too long for one message go in pieces. The
// one-sided form pulls row j instead, with blocking gets, as bale's OpenSHMEM version does. The
// bulk-synchronous form sends each (j, k) of a prefix as a pair, bucketed by the owner of row j,
// which counts the pairs whose k its row j holds.
#include <mpi.h>

#include <algorithm>

#include "alltoallv_exchange.hpp"
#include "kernels.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"
#include "wedge_cursor.hpp"

namespace bale {

namespace pgas = troupe::pgas;

std::int64_t triangles(pgas::world& world, form how, const sparse_rows& lower) {
  const std::int64_t npes = world.npes();
  std::int64_t found = 0;  // the triangles whose middle vertex j has its row here
  switch (how) {
    case form::alltoallv: {
      wedge_cursor wedges{lower};
      std::vector<wedge_query> asked;
      std::vector<int> owners;
      alltoallv_exchange<wedge_query> exchange;
      for_each_superstep(wedge_cursor::count(lower), [&](std::size_t begin, std::size_t end) {
        asked.clear();
        owners.clear();
        wedges.next(end - begin, [&](std::size_t l, std::size_t p, std::size_t q) {
          const auto row = lower.row(l);
          asked.push_back({row[p] / npes, row[q]});
          owners.push_back(static_cast<int>(row[p] % npes));
        });
        exchange.bucket(
            asked.size(), [&](std::size_t i) { return owners[i]; },
            [&](std::size_t i) { return asked[i]; });
        for (const wedge_query& query : exchange.exchange()) {
          const auto row_j = lower.row(static_cast<std::size_t>(query.j_local));
          found += std::binary_search(row_j.begin(), row_j.end(), query.k) ? 1 : 0;
        }
      });
      break;
    }
    case form::selector: {
      // A message is columns of row i below j, then j itself. Row i's columns are sorted, so for
      // a prefix that fits one message that is the row's own storage up to j: no copy.
      pgas::actor<std::vector<std::int64_t>> prefixes{
          world, [&](std::span<const std::int64_t> message, int) {
            const std::int64_t j = message.back();
            found += count_common(message.first(message.size() - 1),
                                  lower.row(static_cast<std::size_t>(j / npes)));
          }};
      const std::size_t most = world.transport().max_payload() / sizeof(std::int64_t);
      std::vector<std::int64_t> part;  // a piece of a prefix too long for one message, then j
      for (std::size_t l = 0; l < lower.rows(); ++l) {
        const auto row = lower.row(l);
        for (std::size_t p = 1; p < row.size(); ++p) {  // p = 0: no column below j
          const std::int64_t j = row[p];
          const int owner = static_cast<int>(j % npes);
          if (p + 1 <= most) {
            prefixes.send(owner, row.first(p + 1));
            continue;
          }
          for (std::size_t from = 0; from < p; from += most - 1) {
            const auto piece = row.subspan(from, std::min(most - 1, p - from));
            part.assign(piece.begin(), piece.end());
            part.push_back(j);
            prefixes.send(owner, part);
          }
        }
      }
      prefixes.done();
      prefixes.wait();
      break;
    }
    case form::lambda: {
      // The selector form's pushes, with j in the captures: a prefix, or a piece of one, is the
      // row's own storage, never copied here.
      struct state {
        const sparse_rows* lower;
        std::int64_t found;
      } here{&lower, 0};
      pgas::lambda_actor<state> prefixes{world, here};
      auto count_shared = [](std::int64_t j_local) {
        return [j_local](state& there, std::span<const std::int64_t> columns) {
          there.found += count_common(columns, there.lower->row(static_cast<std::size_t>(j_local)));
        };
      };
      const std::size_t most = prefixes.max_elements<std::int64_t>(count_shared(0));
      for (std::size_t l = 0; l < lower.rows(); ++l) {
        const auto row = lower.row(l);
        for (std::size_t p = 1; p < row.size(); ++p) {
          const int owner = static_cast<int>(row[p] % npes);
          for (std::size_t from = 0; from < p; from += most)
            prefixes.send(owner, row.subspan(from, std::min(most, p - from)),
                          count_shared(row[p] / npes));
        }
      }
      prefixes.done();
      prefixes.wait();
      found = here.found;
      break;
    }
    case form::rma: {
      rma_rows rows{lower};
      MPI_Barrier(MPI_COMM_WORLD);  // every PE's rows are in its windows before any read
      std::vector<std::int64_t> row_j;
      for (std::size_t l = 0; l < lower.rows(); ++l) {
        const auto row = lower.row(l);
        for (std::size_t p = 1; p < row.size(); ++p) {
          rows.read(static_cast<int>(row[p] % npes), row[p] / npes, row_j);
          found += count_common(row.first(p), row_j);
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);  // no PE frees its windows while another still reads them
      break;
    }
  }
  return world.all_reduce(found);
}

std::int64_t triangles_reference(const sparse_rows& lower) {
  // Marks row v's columns, then counts the marked columns in each of their rows: no sorted
  // intersection, unlike the kernel's.
  std::vector<std::size_t> marked_by(lower.rows(), lower.rows());
  std::int64_t count = 0;
  for (std::size_t v = 0; v < lower.rows(); ++v) {
    const auto row = lower.row(v);
    for (std::int64_t w : row) marked_by[static_cast<std::size_t>(w)] = v;
    for (std::int64_t w : row)
      for (std::int64_t u : lower.row(static_cast<std::size_t>(w)))
        if (marked_by[static_cast<std::size_t>(u)] == v) ++count;
  }
  return count;
}

}  // namespace bale
