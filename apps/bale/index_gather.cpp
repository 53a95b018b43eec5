// index-gather (bale): each PE reads random entries of a table partitioned over all PEs.
//   mpirun -n 4 apps/bale/bale-index-gather --reads 5000000 --table 10000 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"index-gather: random reads of a table partitioned over all PEs"};
  std::int64_t reads = 5'000'000;
  std::int64_t table = 10'000;
  bale::common_options common;
  app.add_option("--reads", reads, "reads per PE")->check(bale::positive());
  app.add_option("--table", table, "table entries per PE")->check(bale::positive());
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto values = bale::gather_table(world, table);
  const auto indices = bale::gather_reads(world, reads, table, common.seed);
  std::vector<std::int64_t> target;
  return bale::run_forms(
      world, "index-gather", reads, common.forms,
      bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                         bale::index_gather(w, how, indices, values, target);
                       },
                       [&](troupe::pgas::world& w, bale::form) -> std::string {
                         const std::string wrong = bale::check_gather(indices, target);
                         return w.all_reduce(std::int64_t{!wrong.empty()}) == 0
                                    ? std::string{}
                                    : (wrong.empty() ? "another PE read wrong values" : wrong);
                       }});
}
