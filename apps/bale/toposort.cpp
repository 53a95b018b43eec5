// toposort (bale): the row and column permutations that make a randomly permuted
// upper-triangular matrix triangular again.
//   mpirun -n 4 apps/bale/bale-toposort --rows 100000 --nonzeros 10 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"toposort: permutations that make a permuted triangular matrix triangular"};
  bale::matrix_options size;
  bale::common_options common;
  bale::add_matrix_options(app, size);
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto matrix = bale::toposort_input(world, size.rows, size.nonzeros, common.seed);
  // The transpose is part of the input, as in bale: the kernel reads each column's rows.
  const auto transposed = bale::transpose(world, bale::form::selector, matrix);
  const std::int64_t nonzeros_per_pe =
      world.all_reduce(static_cast<std::int64_t>(matrix.cols.size())) / world.npes();
  bale::toposort_permutations order;
  return bale::run_forms(world, "toposort", nonzeros_per_pe, common.forms,
                         bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                                            order = bale::toposort(w, how, matrix, transposed);
                                          },
                                          [&](troupe::pgas::world& w, bale::form) {
                                            return bale::check_toposort(w, matrix, order);
                                          }});
}
