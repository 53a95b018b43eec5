// transpose-matrix (bale): the transpose of a random sparse matrix, rows spread over the PEs.
//   mpirun -n 4 apps/bale/bale-transpose-matrix --rows 100000 --nonzeros 10 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"transpose-matrix: the transpose of a random sparse matrix"};
  bale::matrix_options size;
  bale::common_options common;
  bale::add_matrix_options(app, size);
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto matrix = bale::random_matrix(world, size.rows, size.nonzeros, common.seed);
  const auto reference = bale::sequential_transpose(world, size.rows, size.nonzeros, common.seed);
  bale::sparse_rows transposed;
  return bale::run_forms(
      world, "transpose", static_cast<std::int64_t>(matrix.cols.size()), common.forms,
      bale::kernel_run{[&](troupe::pgas::world& w, bale::form how) {
                         transposed = bale::transpose(w, how, matrix);
                       },
                       [&](troupe::pgas::world& w, bale::form) -> std::string {
                         auto wrong = bale::check_transpose(w, transposed, reference);
                         if (w.all_reduce(std::int64_t{!wrong.empty()}) == 0) return {};
                         return wrong.empty() ? "the transpose is wrong on another PE" : wrong;
                       }});
}
