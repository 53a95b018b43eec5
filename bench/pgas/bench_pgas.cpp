// bench-pgas: the bale and graph kernels of HClib-Actor, every form side by side in one MPI job.
// Run it with mpirun; PE 0 prints and writes the CSV. Times are the slowest PE's, from a barrier
// before to a barrier after; rates are per PE.
//   mpirun -n 16 build/bench/bench-pgas --csv bench/results/pgas.csv
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "alltoallv_exchange.hpp"
#include "common/harness.hpp"
#include "graph_common.hpp"
#include "jaccard.hpp"
#include "kernels.hpp"
#include "pagerank.hpp"
#include "triangle_centrality.hpp"
#include "troupe/pgas.hpp"

namespace {

namespace pgas = troupe::pgas;
using troupe::bench::measurement;

struct form_run {
  std::string variant;  // BENCHMARKS.md names: troupe, troupe-lambda, mpi-rma
  std::function<void(pgas::world&)> run;
  std::function<std::string(pgas::world&)> check;  // after each run; empty when right
};

struct comparison {
  std::string benchmark;
  std::string parameters;
  std::string metric;
  double per_pe = 0;  // units per PE and run, for the rate
  std::vector<form_run> forms;
  std::vector<std::pair<std::string, std::string>> ratios;  // rate of first over second
};

class pgas_bench {
 public:
  pgas_bench(troupe::bench::options settings, int pe, int npes)
      : options_(std::move(settings)),
        pe_(pe),
        npes_(npes),
        commit_(troupe::bench::detail::source_commit()),
        date_(troupe::bench::detail::today()),
        machine_(troupe::bench::detail::cpu_model()) {}

  const troupe::bench::options& settings() const { return options_; }
  /// Leaves out the forms whose variant is in `variants` (--skip-forms).
  void skip_forms(std::vector<std::string> variants) { skipped_ = std::move(variants); }
  bool skipped(const std::string& variant) const {
    return std::find(skipped_.begin(), skipped_.end(), variant) != skipped_.end();
  }
  bool selected(const std::string& name) {
    offered_.push_back(name);
    return options_.selected(name);
  }

  void compare(pgas::world& world, const comparison& chosen) {
    comparison what = chosen;
    std::erase_if(what.forms, [&](const form_run& form) { return skipped(form.variant); });
    std::vector<measurement> measured(what.forms.size());
    for (std::size_t f = 0; f < what.forms.size(); ++f) measured[f].variant = what.forms[f].variant;
    // Forms alternate run by run, so drift on the machine hits them alike, and each repetition
    // starts with the next form, so none always runs right after the slow one-sided form.
    for (int repetition = 0; repetition < options_.warmup + options_.runs; ++repetition) {
      for (std::size_t turn = 0; turn < what.forms.size(); ++turn) {
        const std::size_t f = (turn + static_cast<std::size_t>(repetition)) % what.forms.size();
        if (!measured[f].ok) continue;
        world.barrier();
        const double start = MPI_Wtime();
        what.forms[f].run(world);
        world.barrier();
        const double seconds = world.all_reduce(MPI_Wtime() - start, pgas::world::reduction::max);
        std::string wrong = what.forms[f].check(world);
        // Every PE must agree, or the next collective would not match.
        if (world.all_reduce(std::int64_t{!wrong.empty()}) != 0) {
          measured[f].ok = false;
          measured[f].failure = wrong.empty() ? "the check failed on another PE" : wrong;
          failed_ = true;
        } else if (repetition >= options_.warmup) {
          measured[f].seconds.push_back(seconds);
        }
      }
    }
    if (pe_ == 0) report(what, measured);
  }

  int finish() const {
    return troupe::bench::report_unknown_only(options_, offered_, failed_ ? 1 : 0);
  }

 private:
  void report(const comparison& what, const std::vector<measurement>& measured) const {
    std::printf("%s  %s\n  %-16s %5s %12s %12s %12s %14s  %s\n", what.benchmark.c_str(),
                what.parameters.c_str(), "variant", "runs", "median_s", "min_s", "max_s",
                what.metric.c_str(), "check");
    std::ofstream out;
    const bool fresh =
        !std::filesystem::exists(options_.csv) || std::filesystem::file_size(options_.csv) == 0;
    if (options_.csv.has_parent_path())
      std::filesystem::create_directories(options_.csv.parent_path());
    out.open(options_.csv, std::ios::app);
    if (fresh)
      out << "benchmark,params,variant,backend,device,runs,median_s,min_s,max_s,metric,value,"
             "check,commit,date\n";
    using troupe::bench::detail::csv_field;
    using troupe::bench::detail::seconds_text;
    for (const measurement& result : measured) {
      const bool usable = result.ok && !result.seconds.empty();
      const double rate = usable ? what.per_pe / result.median() : 0;
      if (usable)
        std::printf("  %-16s %5zu %12.6g %12.6g %12.6g %14.4g  ok\n", result.variant.c_str(),
                    result.seconds.size(), result.median(), result.min(), result.max(), rate);
      else
        std::printf("  %-16s %5zu %12s %12s %12s %14s  fail: %s\n", result.variant.c_str(),
                    result.seconds.size(), "-", "-", "-", "", result.failure.c_str());
      out << csv_field(what.benchmark) << ',' << csv_field(what.parameters) << ','
          << csv_field(result.variant) << ",mpi," << csv_field(machine_) << ','
          << result.seconds.size() << ',' << (usable ? seconds_text(result.median()) : "") << ','
          << (usable ? seconds_text(result.min()) : "") << ','
          << (usable ? seconds_text(result.max()) : "") << ',' << csv_field(what.metric) << ','
          << (usable ? seconds_text(rate) : "") << ',' << (usable ? "\"ok\"" : "\"fail\"") << ','
          << csv_field(commit_) << ',' << date_ << '\n';
    }
    for (const auto& [name, baseline] : what.ratios) {
      const measurement* a = nullptr;
      const measurement* b = nullptr;
      for (const measurement& m : measured) {
        if (m.variant == name) a = &m;
        if (m.variant == baseline) b = &m;
      }
      if (a && b && a->ok && b->ok && !a->seconds.empty() && !b->seconds.empty())
        std::printf("  ratio %s/%s (rate): %.3g\n", name.c_str(), baseline.c_str(),
                    b->median() / a->median());
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  troupe::bench::options options_;
  int pe_;
  int npes_;
  std::string commit_;
  std::string date_;
  std::string machine_;
  std::vector<std::string> offered_;
  std::vector<std::string> skipped_;
  bool failed_ = false;
};

const std::vector<std::pair<std::string, std::string>> form_ratios{
    {"troupe", "mpi-rma"},
    {"troupe-lambda", "troupe"},
    {"troupe-lambda", "mpi-rma"},
    {"troupe", "mpi-alltoallv"},
    {"troupe-lambda", "mpi-alltoallv"}};

std::string variant_of(bale::form how) {
  switch (how) {
    case bale::form::selector:
      return "troupe";
    case bale::form::lambda:
      return "troupe-lambda";
    case bale::form::rma:
      return "mpi-rma";
    case bale::form::alltoallv:
      return "mpi-alltoallv";
  }
  return "?";
}

// What this PE's slots must hold after a histogram run: its part of bale's sequential histogram
// of every PE's updates (made untimed, once), so that an update in the wrong slot fails.
std::vector<std::int64_t> expected_counts(const pgas::world& world, std::int64_t updates,
                                          std::int64_t table_per_pe) {
  const auto whole = bale::histogram_reference(world.npes(), updates, table_per_pe, 1);
  std::vector<std::int64_t> here(static_cast<std::size_t>(table_per_pe));
  for (std::size_t local = 0; local < here.size(); ++local)
    here[local] = whole[local * static_cast<std::size_t>(world.npes()) +
                        static_cast<std::size_t>(world.pe())];
  return here;
}

// The check after each histogram run: every slot against expected_counts.
std::string compare_counts(const pgas::world& world, const std::vector<std::int64_t>& table,
                           const std::vector<std::int64_t>& expected) {
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t slot = 0; slot < table.size(); ++slot)
    if (table[slot] != expected[slot] && wrong++ == 0)
      first = "slot " + std::to_string(slot) + " holds " + std::to_string(table[slot]) + ", not " +
              std::to_string(expected[slot]);
  if (wrong == 0) return {};
  return std::to_string(wrong) + " slots of PE " + std::to_string(world.pe()) + " are wrong; " +
         first;
}

void run_histogram(pgas_bench& bench, pgas::world& world, std::int64_t updates,
                   std::int64_t table_per_pe) {
  const auto mine = bale::histogram_updates(world, updates, table_per_pe, 1);
  const auto expected = expected_counts(world, updates, table_per_pe);
  auto table = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(table_per_pe));
  comparison rows{.benchmark = "histogram",
                  .parameters = "pes=" + std::to_string(world.npes()) + ";updates=" +
                                std::to_string(updates) + ";table=" + std::to_string(table_per_pe),
                  .metric = "updates/s/PE",
                  .per_pe = static_cast<double>(updates),
                  .forms = {},
                  .ratios = form_ratios};
  for (bale::form how : bale::all_forms) {
    rows.forms.push_back(
        {variant_of(how),
         [&, how, table](pgas::world& w) {
           std::fill(table->begin(), table->end(), 0);
           bale::histogram(w, how, mine, *table);
         },
         [&, table](pgas::world& w) { return compare_counts(w, *table, expected); }});
  }
  bench.compare(world, rows);
}

void run_index_gather(pgas_bench& bench, pgas::world& world, std::int64_t reads,
                      std::int64_t table_per_pe) {
  const auto table = bale::gather_table(world, table_per_pe);
  const auto indices = bale::gather_reads(world, reads, table_per_pe, 1);
  auto target = std::make_shared<std::vector<std::int64_t>>();
  comparison rows{.benchmark = "index_gather",
                  .parameters = "pes=" + std::to_string(world.npes()) + ";reads=" +
                                std::to_string(reads) + ";table=" + std::to_string(table_per_pe),
                  .metric = "reads/s/PE",
                  .per_pe = static_cast<double>(reads),
                  .forms = {},
                  .ratios = form_ratios};
  for (bale::form how : bale::all_forms) {
    rows.forms.push_back(
        {variant_of(how),
         [&, how, target](pgas::world& w) { bale::index_gather(w, how, indices, table, *target); },
         [&, target](pgas::world&) { return bale::check_gather(indices, *target); }});
  }
  bench.compare(world, rows);
}

void run_randperm(pgas_bench& bench, pgas::world& world, std::int64_t items) {
  auto part = std::make_shared<std::vector<std::int64_t>>();
  comparison rows{
      .benchmark = "randperm",
      .parameters = "pes=" + std::to_string(world.npes()) + ";items=" + std::to_string(items),
      .metric = "items/s/PE",
      .per_pe = static_cast<double>(items),
      .forms = {},
      .ratios = form_ratios};
  for (bale::form how : bale::all_forms)
    rows.forms.push_back(
        {variant_of(how),
         [how, part, items](pgas::world& w) { *part = bale::random_permutation(w, how, items, 1); },
         [part, items](pgas::world& w) { return bale::check_permutation(w, *part, items); }});
  bench.compare(world, rows);
}

// The rows of a matrix kernel's comparison, forms still to add.
comparison matrix_comparison(const std::string& benchmark, const pgas::world& world,
                             std::int64_t rows_per_pe, const bale::sparse_rows& matrix) {
  return comparison{.benchmark = benchmark,
                    .parameters = "pes=" + std::to_string(world.npes()) +
                                  ";rows=" + std::to_string(rows_per_pe) + ";nonzeros_per_row=10",
                    .metric = "nonzeros/s/PE",
                    .per_pe = static_cast<double>(matrix.cols.size()),
                    .forms = {},
                    .ratios = form_ratios};
}

void run_transpose(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  auto matrix = std::make_shared<bale::sparse_rows>(bale::random_matrix(world, rows_per_pe, 10, 1));
  // The sequential reference once, untimed: every run is checked against it.
  auto reference =
      std::make_shared<bale::sparse_rows>(bale::sequential_transpose(world, rows_per_pe, 10, 1));
  auto transposed = std::make_shared<bale::sparse_rows>();
  comparison rows = matrix_comparison("transpose_matrix", world, rows_per_pe, *matrix);
  for (bale::form how : bale::all_forms)
    rows.forms.push_back({variant_of(how),
                          [how, matrix, transposed](pgas::world& w) {
                            *transposed = bale::transpose(w, how, *matrix);
                          },
                          [transposed, reference](pgas::world& w) {
                            return bale::check_transpose(w, *transposed, *reference);
                          }});
  bench.compare(world, rows);
}

void run_permute(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  auto matrix = std::make_shared<bale::sparse_rows>(bale::random_matrix(world, rows_per_pe, 10, 1));
  const std::int64_t all_rows = rows_per_pe * world.npes();
  auto row_map =
      std::make_shared<std::vector<std::int64_t>>(bale::cyclic_permutation(world, all_rows, 2));
  auto column_map =
      std::make_shared<std::vector<std::int64_t>>(bale::cyclic_permutation(world, all_rows, 3));
  auto row_of = std::make_shared<std::vector<std::int64_t>>(bale::whole_permutation(all_rows, 2));
  auto column_of =
      std::make_shared<std::vector<std::int64_t>>(bale::whole_permutation(all_rows, 3));
  auto permuted = std::make_shared<bale::sparse_rows>();
  comparison rows = matrix_comparison("permute_matrix", world, rows_per_pe, *matrix);
  for (bale::form how : bale::all_forms)
    rows.forms.push_back({variant_of(how),
                          [how, matrix, row_map, column_map, permuted](pgas::world& w) {
                            *permuted = bale::permute(w, how, *matrix, *row_map, *column_map);
                          },
                          [matrix, permuted, row_of, column_of](pgas::world& w) {
                            return bale::check_permuted(w, *matrix, *permuted, *row_of, *column_of);
                          }});
  bench.compare(world, rows);
}

void run_toposort(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  auto matrix =
      std::make_shared<bale::sparse_rows>(bale::toposort_input(world, rows_per_pe, 10, 1));
  // Input, as in bale: the kernel reads each column's rows from the transpose.
  auto transposed =
      std::make_shared<bale::sparse_rows>(bale::transpose(world, bale::form::selector, *matrix));
  auto order = std::make_shared<bale::toposort_permutations>();
  comparison rows = matrix_comparison("toposort", world, rows_per_pe, *matrix);
  // Rows near the triangle's end are short, so the PEs' counts differ a little: the mean.
  rows.per_pe =
      static_cast<double>(world.all_reduce(static_cast<std::int64_t>(matrix->cols.size()))) /
      world.npes();
  for (bale::form how : bale::all_forms)
    rows.forms.push_back(
        {variant_of(how),
         [how, matrix, transposed, order](pgas::world& w) {
           *order = bale::toposort(w, how, *matrix, *transposed);
         },
         [matrix, order](pgas::world& w) { return bale::check_toposort(w, *matrix, *order); }});
  bench.compare(world, rows);
}

// The graph kernels' input: a flat (Erdős–Rényi) graph of mean degree 35, as the apps' default.
bale::graph_spec graph_input(const pgas::world& world, std::int64_t rows_per_pe) {
  return bale::graph_spec{bale::graph_model::flat, rows_per_pe * world.npes(), 35, {}, 1};
}

// The rows of a graph kernel's comparison, forms still to add; `per_pe` in edges of the graph.
comparison graph_comparison(const std::string& benchmark, const pgas::world& world,
                            std::int64_t rows_per_pe, const std::string& more, double per_pe) {
  return comparison{.benchmark = benchmark,
                    .parameters = "pes=" + std::to_string(world.npes()) + ";rows=" +
                                  std::to_string(rows_per_pe) + ";degree=35;graph=flat" + more,
                    .metric = "edges/s/PE",
                    .per_pe = per_pe,
                    .forms = {},
                    .ratios = form_ratios};
}

// The mean over PEs of this PE's edges of L.
double edges_per_pe(pgas::world& world, const bale::sparse_rows& lower) {
  return static_cast<double>(world.all_reduce(static_cast<std::int64_t>(lower.cols.size()))) /
         world.npes();
}

void run_jaccard(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  const auto spec = graph_input(world, rows_per_pe);
  const auto lower = bale::lower_triangle(world, spec);
  const auto adjacency = bale::adjacency(world, lower);
  // The sequential reference once, untimed: every run is checked against it.
  const auto expected =
      graph::jaccard_reference(graph::whole_adjacency(spec), world.pe(), world.npes());
  std::vector<double> values;
  comparison rows = graph_comparison("jaccard", world, rows_per_pe, "", edges_per_pe(world, lower));
  for (bale::form how : bale::all_forms)
    rows.forms.push_back(
        {variant_of(how),
         [&, how](pgas::world& w) { values = graph::jaccard(w, how, lower, adjacency); },
         [&](pgas::world& w) { return graph::check_jaccard(w, lower, values, expected); }});
  bench.compare(world, rows);
}

void run_pagerank(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  constexpr std::int64_t iterations = 20;
  const auto spec = graph_input(world, rows_per_pe);
  const auto lower = bale::lower_triangle(world, spec);
  const auto adjacency = bale::adjacency(world, lower);
  const auto reference = graph::pagerank_reference(graph::whole_adjacency(spec), iterations);
  std::vector<double> ranks;
  // Edges per iteration, times the iterations.
  comparison rows =
      graph_comparison("pagerank", world, rows_per_pe, ";iterations=" + std::to_string(iterations),
                       edges_per_pe(world, lower) * iterations);
  for (bale::form how : bale::all_forms)
    rows.forms.push_back(
        {variant_of(how),
         [&, how](pgas::world& w) { ranks = graph::pagerank(w, how, adjacency, iterations); },
         [&](pgas::world& w) { return graph::check_pagerank(w, ranks, reference); }});
  bench.compare(world, rows);
}

void run_triangles(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  const auto spec = graph_input(world, rows_per_pe);
  const auto lower = bale::lower_triangle(world, spec);
  // The sequential count once, untimed, on PE 0 alone (it draws the whole graph).
  const std::int64_t expected = world.all_reduce(
      world.pe() == 0 ? bale::triangles_reference(bale::lower_triangle(spec, 0, 1)) : 0);
  std::int64_t counted = 0;
  comparison rows =
      graph_comparison("triangles", world, rows_per_pe, "", edges_per_pe(world, lower));
  for (bale::form how : bale::all_forms)
    rows.forms.push_back(
        {variant_of(how), [&, how](pgas::world& w) { counted = bale::triangles(w, how, lower); },
         [&](pgas::world&) {
           return counted == expected
                      ? std::string{}
                      : "counted " + std::to_string(counted) +
                            " triangles, the sequential count is " + std::to_string(expected);
         }});
  bench.compare(world, rows);
}

void run_triangle_centrality(pgas_bench& bench, pgas::world& world, std::int64_t rows_per_pe) {
  const auto spec = graph_input(world, rows_per_pe);
  const auto lower = bale::lower_triangle(world, spec);
  const auto reference = graph::triangle_centrality_reference(graph::whole_adjacency(spec));
  graph::triangle_centrality_result result;
  comparison rows =
      graph_comparison("triangle_centrality", world, rows_per_pe, "", edges_per_pe(world, lower));
  for (bale::form how : bale::all_forms)
    rows.forms.push_back(
        {variant_of(how),
         [&, how](pgas::world& w) { result = graph::triangle_centrality(w, how, lower); },
         [&](pgas::world& w) { return graph::check_triangle_centrality(w, result, reference); }});
  bench.compare(world, rows);
}

// The aggregation buffer's size, swept on the histogram's selector form: what chose the default.
void run_buffer_sweep(pgas_bench& bench, std::int64_t updates, std::int64_t table_per_pe) {
  for (std::size_t bytes : {1024, 4096, 16384, 65536, 262144}) {
    pgas::world world{pgas::world_options{.buffer_bytes = bytes}};
    const auto mine = bale::histogram_updates(world, updates, table_per_pe, 1);
    const auto expected = expected_counts(world, updates, table_per_pe);
    auto table =
        std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(table_per_pe));
    comparison rows{
        .benchmark = "aggregation_buffer",
        .parameters = "buffer_bytes=" + std::to_string(bytes) + ";pes=" +
                      std::to_string(world.npes()) + ";updates=" + std::to_string(updates),
        .metric = "updates/s/PE",
        .per_pe = static_cast<double>(updates),
        .forms = {{"troupe",
                   [&, table](pgas::world& w) {
                     std::fill(table->begin(), table->end(), 0);
                     bale::histogram(w, bale::form::selector, mine, *table);
                   },
                   [&, table](pgas::world& w) { return compare_counts(w, *table, expected); }}},
        .ratios = {}};
    bench.compare(world, rows);
  }
}

// The alltoallv form's superstep, swept on histogram and index-gather at the paper's sizes: what
// chose its default (alltoallv_exchange.hpp).
void run_superstep_sweep(pgas_bench& bench, pgas::world& world, std::int64_t updates,
                         std::int64_t slots, std::int64_t gather_table) {
  const auto mine = bale::histogram_updates(world, updates, slots, 1);
  const auto expected = expected_counts(world, updates, slots);
  auto counts = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(slots));
  const auto table = bale::gather_table(world, gather_table);
  const auto indices = bale::gather_reads(world, updates, gather_table, 1);
  auto gathered = std::make_shared<std::vector<std::int64_t>>();
  const std::size_t chosen = bale::superstep_items;
  for (std::size_t items : {4096, 16384, 65536, 262144, 1048576}) {
    bale::superstep_items = items;
    const std::string sizes = "pes=" + std::to_string(world.npes()) +
                              ";superstep=" + std::to_string(items) +
                              ";updates=" + std::to_string(updates);
    bench.compare(
        world,
        {.benchmark = "alltoallv_superstep_histogram",
         .parameters = sizes + ";table=" + std::to_string(slots),
         .metric = "updates/s/PE",
         .per_pe = static_cast<double>(updates),
         .forms = {{"mpi-alltoallv",
                    [&, counts](pgas::world& w) {
                      std::fill(counts->begin(), counts->end(), 0);
                      bale::histogram(w, bale::form::alltoallv, mine, *counts);
                    },
                    [&, counts](pgas::world& w) { return compare_counts(w, *counts, expected); }}},
         .ratios = {}});
    bench.compare(world, {.benchmark = "alltoallv_superstep_index_gather",
                          .parameters = sizes + ";table=" + std::to_string(gather_table),
                          .metric = "reads/s/PE",
                          .per_pe = static_cast<double>(updates),
                          .forms = {{"mpi-alltoallv",
                                     [&, gathered](pgas::world& w) {
                                       bale::index_gather(w, bale::form::alltoallv, indices, table,
                                                          *gathered);
                                     },
                                     [&, gathered](pgas::world&) {
                                       return bale::check_gather(indices, *gathered);
                                     }}},
                          .ratios = {}});
  }
  bale::superstep_items = chosen;
}

std::string own_usage() {
  return troupe::bench::usage("pgas") +
         "  --scale F      divide the work per PE (updates, reads, items, rows) by F, for slow\n"
         "                 networks; tables keep their size, and the CSV records the sizes run\n"
         "  --skip-forms V leave out the forms of these variants, separated by commas (troupe,\n"
         "                 troupe-lambda, mpi-rma, mpi-alltoallv): mpi-rma over a slow network\n"
         "  --superstep N  items a PE sends in one superstep of mpi-alltoallv at most (default " +
         std::to_string(bale::superstep_items) +
         ");\n"
         "                 the alltoallv_superstep sweep shows which is best on a network\n";
}

// bench-pgas's own options, taken out of the arguments before the harness parses the rest.
struct own_options {
  std::int64_t scale = 1;
  std::vector<std::string> skipped_forms;
  std::size_t superstep_items = bale::superstep_items;
};

own_options take_own_options(std::vector<std::string>& arguments) {
  own_options own;
  std::vector<std::string> rest;
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    const std::string& name = arguments[index];
    if (name != "--scale" && name != "--skip-forms" && name != "--superstep") {
      rest.push_back(name);
      continue;
    }
    if (index + 1 >= arguments.size())
      throw troupe::bench::usage_error(name + ": expected a value after it, found none");
    const std::string& value = arguments[++index];
    if (name == "--scale") {
      own.scale = troupe::bench::detail::parse_count("--scale", value, 1);
      continue;
    }
    if (name == "--superstep") {
      own.superstep_items =
          static_cast<std::size_t>(troupe::bench::detail::parse_count("--superstep", value, 1));
      continue;
    }
    std::stringstream list(value);
    for (std::string variant; std::getline(list, variant, ',');) {
      if (variant != "troupe" && variant != "troupe-lambda" && variant != "mpi-rma" &&
          variant != "mpi-alltoallv")
        throw troupe::bench::usage_error("--skip-forms: no form's variant is called '" + variant +
                                         "' (troupe, troupe-lambda, mpi-rma, mpi-alltoallv)");
      own.skipped_forms.push_back(variant);
    }
  }
  arguments = std::move(rest);
  return own;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // several worlds (one per buffer size) live in this process
  int pe = 0;
  int npes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &pe);
  MPI_Comm_size(MPI_COMM_WORLD, &npes);
  int code = 0;
  try {
    std::vector<std::string> arguments(argv, argv + argc);
    const own_options own = take_own_options(arguments);
    const std::int64_t scale = own.scale;
    bale::superstep_items = own.superstep_items;
    std::vector<char*> pointers;
    for (std::string& each : arguments) pointers.push_back(each.data());
    auto settings =
        troupe::bench::parse_options("pgas", static_cast<int>(pointers.size()), pointers.data());
    if (settings.help) {
      if (pe == 0) std::cout << own_usage();
    } else {
      pgas_bench bench{settings, pe, npes};
      bench.skip_forms(own.skipped_forms);
      // The work per PE: the sizes, or the smoke test's, divided by --scale.
      auto work = [&](std::int64_t full, std::int64_t quick) {
        return std::max<std::int64_t>(1, (settings.quick ? quick : full) / scale);
      };
      // Histogram and index-gather at the HClib-Actor paper's sizes: 10M updates per PE into
      // 1000 slots per PE, 10M reads per PE from 100000 per PE.
      const std::int64_t updates = work(10'000'000, 20'000);
      const std::int64_t slots = 1'000;
      const std::int64_t gather_table = settings.quick ? 1'000 : 100'000;
      if (pe == 0)
        std::printf("bench-pgas: %d PEs, %d warm-up + %d timed runs per form, CSV %s\n\n", npes,
                    settings.warmup, settings.runs, settings.csv.string().c_str());
      {
        pgas::world world;
        if (bench.selected("histogram")) run_histogram(bench, world, updates, slots);
        if (bench.selected("index_gather")) run_index_gather(bench, world, updates, gather_table);
        if (bench.selected("randperm")) run_randperm(bench, world, work(1'000'000, 20'000));
        if (bench.selected("permute_matrix")) run_permute(bench, world, work(100'000, 2'000));
        if (bench.selected("transpose_matrix")) run_transpose(bench, world, work(100'000, 2'000));
        if (bench.selected("toposort")) run_toposort(bench, world, work(100'000, 2'000));
        if (bench.selected("triangles")) run_triangles(bench, world, work(10'000, 1'000));
        if (bench.selected("triangle_centrality"))
          run_triangle_centrality(bench, world, work(2'000, 500));
        if (bench.selected("jaccard")) run_jaccard(bench, world, work(2'000, 500));
        if (bench.selected("pagerank")) run_pagerank(bench, world, work(2'000, 500));
        if (bench.selected("alltoallv_superstep"))
          run_superstep_sweep(bench, world, updates, slots, gather_table);
      }
      if (bench.selected("aggregation_buffer")) run_buffer_sweep(bench, updates, slots);
      code = bench.finish();
    }
  } catch (const troupe::bench::usage_error& failure) {
    if (pe == 0) std::cerr << "bench-pgas: " << failure.what() << "\n\n" << own_usage();
    code = 2;
  }
  MPI_Finalize();
  return code;
}
