// randperm (bale): a random permutation of items_per_pe * npes items by dart throwing.
//   mpirun -n 4 apps/bale/bale-randperm --items 1000000 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"randperm: a random permutation by dart throwing"};
  std::int64_t items = 1'000'000;
  std::uint64_t seed = 1;
  std::vector<std::string> forms{"selector", "lambda", "rma"};
  app.add_option("--items", items, "items per PE")->check(bale::positive());
  app.add_option("--seed", seed, "seed of the darts");
  app.add_option("--forms", forms, "forms to run: selector, lambda, rma")
      ->check(CLI::IsMember({"selector", "lambda", "rma"}))
      ->delimiter(',');
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& failure) {
    return world.pe() == 0 ? app.exit(failure) : (failure.get_exit_code() != 0 ? 2 : 0);
  }
  std::vector<std::int64_t> part;
  return bale::run_forms(world, "randperm", items, forms, [&] {
    return bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                              part = bale::random_permutation(w, how, items, seed);
                            },
                            [&](troupe::pgas::world& w, bale::form) {
                              return bale::check_permutation(w, part, items);
                            }};
  });
}
