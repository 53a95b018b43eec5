// graph-pagerank: PageRank of a random undirected graph, a fixed number of pushing iterations
// in every form, checked against a sequential reference.
//   mpirun -n 4 build/apps/graph/graph-pagerank --graph geometric --iterations 20 --seed 1
#include "app_main.hpp"
#include "graph_common.hpp"
#include "pagerank.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"pagerank: PageRank of a random undirected graph"};
  bale::graph_options size;
  size.rows = 2'000;
  bale::common_options common;
  std::int64_t iterations = 20;
  bale::add_graph_options(app, size);
  app.add_option("--iterations", iterations, "PageRank iterations")->check(bale::positive());
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto graph = bale::draw_graph(world, size, common.seed, "graph-pagerank");
  if (!graph) return 2;
  const auto& [spec, lower] = *graph;
  const auto adjacency = bale::adjacency(world, lower);
  const auto reference = graph::pagerank_reference(graph::whole_adjacency(spec), iterations);
  // The rate's unit: edges of the graph times iterations, the mean over PEs.
  const auto edges = world.all_reduce(static_cast<std::int64_t>(lower.cols.size()));
  std::vector<double> ranks;
  return bale::run_forms(world, "pagerank", edges * iterations / world.npes(), common.forms,
                         bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                                            ranks = graph::pagerank(w, how, adjacency, iterations);
                                          },
                                          [&](troupe::pgas::world& w, bale::form) {
                                            return graph::check_pagerank(w, ranks, reference);
                                          }});
}
