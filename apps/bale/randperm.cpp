// randperm (bale): a random permutation of items_per_pe * npes items by dart throwing.
//   mpirun -n 4 apps/bale/bale-randperm --items 1000000 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"randperm: a random permutation by dart throwing"};
  std::int64_t items = 1'000'000;
  bale::common_options common;
  app.add_option("--items", items, "items per PE")->check(bale::positive());
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  std::vector<std::int64_t> part;
  return bale::run_forms(world, "randperm", items, common.forms,
                         bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                                            part = bale::random_permutation(w, how, items,
                                                                            common.seed);
                                          },
                                          [&](troupe::pgas::world& w, bale::form) {
                                            return bale::check_permutation(w, part, items);
                                          }});
}
