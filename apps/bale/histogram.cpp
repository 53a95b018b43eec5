// histogram (bale): each PE adds 1 to random slots of a table partitioned over all PEs.
//   mpirun -n 4 apps/bale/bale-histogram --updates 5000000 --table 10000 --seed 1
#include "app_main.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  CLI::App app{"histogram: random increments to a table partitioned over all PEs"};
  std::int64_t updates = 5'000'000;
  std::int64_t table = 10'000;
  bale::common_options common;
  app.add_option("--updates", updates, "updates per PE")->check(bale::positive());
  app.add_option("--table", table, "table slots per PE")->check(bale::positive());
  bale::add_common_options(app, common);
  if (auto code = bale::parse_command_line(app, world, argc, argv)) return *code;
  const auto mine = bale::histogram_updates(world, updates, table, common.seed);
  std::vector<std::int64_t> slots(static_cast<std::size_t>(table), 0);
  return bale::run_forms(
      world, "histogram", updates, common.forms,
      bale::kernel_run{
          [&](troupe::pgas::world& w, bale::form how) {
            std::fill(slots.begin(), slots.end(), 0);
            bale::histogram(w, how, mine, slots);
          },
          [&](troupe::pgas::world& w, bale::form how) -> std::string {
            // Against the sequential reference, where the whole table is small enough.
            if (table * w.npes() <= 50'000'000) {
              const auto whole = bale::histogram_reference(w.npes(), updates, table, common.seed);
              std::int64_t wrong = 0;
              for (std::int64_t l = 0; l < table; ++l)
                wrong += slots[static_cast<std::size_t>(l)] !=
                         whole[static_cast<std::size_t>(l * w.npes() + w.pe())];
              if (w.all_reduce(wrong) != 0)
                return std::to_string(wrong) + " slots differ from the sequential reference";
            }
            return bale::check_histogram(w, how, mine, table);
          }});
}
