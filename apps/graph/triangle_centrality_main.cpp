// triangle-centrality: Burkhardt's triangle centrality of every vertex of a random undirected
// graph, its lower triangle spread over the PEs; checked against a sequential reference.
//   mpirun -n 4 apps/graph/graph-triangle-centrality --graph geometric --rows 2000 --seed 1
#include "app_main.hpp"
#include "graph_common.hpp"
#include "triangle_centrality.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"triangle-centrality: the triangle centrality of a random undirected graph"};
  bale::graph_options size;
  size.rows = 2'000;  // the sequential reference runs on every PE
  bale::common_options common;
  bale::add_graph_options(app, size);
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto graph = bale::draw_graph(world, size, common.seed, "graph-triangle-centrality");
  if (!graph) return 2;
  const auto& [spec, lower] = *graph;
  // Every PE draws the whole graph for the reference and checks its own vertices against it.
  const std::vector<double> reference =
      graph::triangle_centrality_reference(graph::whole_adjacency(spec));
  const auto edges = world.all_reduce(static_cast<std::int64_t>(lower.cols.size()));
  if (world.pe() == 0)
    std::printf("triangle-centrality: %s graph, %lld vertices, %lld edges\n",
                bale::name(spec.model).c_str(), static_cast<long long>(lower.columns),
                static_cast<long long>(edges));
  graph::triangle_centrality_result result;
  return bale::run_forms(world, "triangle-centrality", edges / world.npes(), common.forms,
                         bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                                            result = graph::triangle_centrality(w, how, lower);
                                          },
                                          [&](troupe::pgas::world& w, bale::form) {
                                            return graph::check_triangle_centrality(w, result,
                                                                                    reference);
                                          }});
}
