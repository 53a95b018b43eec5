// permute-matrix (bale): a random sparse matrix with its rows and columns randomly permuted.
//   mpirun -n 4 apps/bale/bale-permute-matrix --rows 100000 --nonzeros 10 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"permute-matrix: a sparse matrix with permuted rows and columns"};
  bale::matrix_options size;
  bale::common_options common;
  bale::add_matrix_options(app, size);
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto matrix = bale::random_matrix(world, size.rows, size.nonzeros, common.seed);
  const std::int64_t all_rows = size.rows * world.npes();
  const auto row_map = bale::cyclic_permutation(world, all_rows, common.seed + 1);
  const auto column_map = bale::cyclic_permutation(world, all_rows, common.seed + 2);
  const auto row_back = bale::cyclic_permutation(world, all_rows, common.seed + 1, true);
  const auto column_back = bale::cyclic_permutation(world, all_rows, common.seed + 2, true);
  const auto row_of = bale::whole_permutation(all_rows, common.seed + 1);
  const auto column_of = bale::whole_permutation(all_rows, common.seed + 2);
  bale::sparse_rows permuted;
  return bale::run_forms(
      world, "permute-matrix", static_cast<std::int64_t>(matrix.cols.size()), common.forms,
      bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                         permuted = bale::permute(w, how, matrix, row_map, column_map);
                       },
                       [&](troupe::pgas::world& w, bale::form how) -> std::string {
                         // B is A mapped sequentially, and permuting back gives A.
                         const std::string wrong =
                             bale::check_permuted(w, matrix, permuted, row_of, column_of);
                         if (!wrong.empty()) return wrong;
                         const bool same =
                             bale::permute(w, how, permuted, row_back, column_back) == matrix;
                         return w.all_reduce(std::int64_t{!same}) == 0
                                    ? std::string{}
                                    : "permuting back did not give the matrix";
                       }});
}
