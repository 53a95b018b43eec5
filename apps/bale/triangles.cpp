// triangles (bale): the triangles of a random undirected graph, its lower triangle spread over
// the PEs; checked against a sequential count and, for Kronecker graphs, the closed form.
//   mpirun -n 4 apps/bale/bale-triangles --graph kronecker --rows 10000 --nonzeros 35 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"triangles: the triangles of a random undirected graph"};
  bale::graph_options size;
  bale::common_options common;
  bale::add_graph_options(app, size);
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto graph = bale::draw_graph(world, size, common.seed, "bale-triangles");
  if (!graph) return 2;
  const auto& [spec, lower] = *graph;
  // The sequential count draws the whole graph: PE 0 alone does, and tells the others.
  const std::int64_t expected = world.all_reduce(
      world.pe() == 0 ? bale::triangles_reference(bale::lower_triangle(spec, 0, 1)) : 0);
  const bool kronecker = spec.model == bale::graph_model::kronecker;
  const std::int64_t closed_form = kronecker ? bale::kronecker_triangles(spec.stars) : 0;
  const auto edges = world.all_reduce(static_cast<std::int64_t>(lower.cols.size()));
  if (world.pe() == 0)
    std::printf("triangles: %s graph, %lld vertices, %lld edges, %lld triangles (sequential)\n",
                bale::name(spec.model).c_str(), static_cast<long long>(lower.columns),
                static_cast<long long>(edges), static_cast<long long>(expected));
  std::int64_t counted = 0;
  return bale::run_forms(
      world, "triangles", edges / world.npes(), common.forms,
      bale::kernel_run{
          [&](troupe::pgas::world& w, bale::form how) { counted = bale::triangles(w, how, lower); },
          [&](troupe::pgas::world&, bale::form) -> std::string {
            std::string differs;
            if (counted != expected)
              differs = "the sequential count is " + std::to_string(expected);
            if (kronecker && counted != closed_form)
              differs += (differs.empty() ? "" : " and ") + std::string("the closed form is ") +
                         std::to_string(closed_form);
            return differs.empty()
                       ? differs
                       : "counted " + std::to_string(counted) + " triangles, but " + differs;
          }});
}
