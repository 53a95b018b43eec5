// graph-jaccard: the Jaccard index of every edge of a random undirected graph, in every form,
// checked against a sequential reference.
//   mpirun -n 4 build/apps/graph/graph-jaccard --graph kronecker --rows 2000 --seed 1
#include "app_main.hpp"
#include "graph_common.hpp"
#include "jaccard.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"jaccard: the Jaccard index of every edge of a random graph"};
  bale::graph_options size;
  size.rows = 2'000;
  bale::common_options common;
  bale::add_graph_options(app, size);
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto graph = bale::draw_graph(world, size, common.seed, "graph-jaccard");
  if (!graph) return 2;
  const auto& [spec, lower] = *graph;
  const auto adjacency = bale::adjacency(world, lower);
  const auto expected =
      graph::jaccard_reference(graph::whole_adjacency(spec), world.pe(), world.npes());
  // The rate's unit: edges of L, the mean over PEs.
  const auto edges = world.all_reduce(static_cast<std::int64_t>(lower.cols.size()));
  std::vector<double> values;
  return bale::run_forms(world, "jaccard", edges / world.npes(), common.forms,
                         bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                                            values = graph::jaccard(w, how, lower, adjacency);
                                          },
                                          [&](troupe::pgas::world& w, bale::form) {
                                            return graph::check_jaccard(w, lower, values, expected);
                                          }});
}
