// The shared main of the bale apps: the command line, timing over all PEs, the report.
#pragma once

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "alltoallv_exchange.hpp"
#include "graphs.hpp"
#include "kernels.hpp"
#include "troupe/pgas/world.hpp"

namespace bale {

/// A command-line check: a whole number of at least 1, with a message that says so.
inline CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::size_t used = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || value < 1)
          return "expected a whole number of at least 1, found '" + text + "'";
        return {};
      },
      "N>=1");
}

/// The options every app has: the seed, the forms to run, and the alltoallv form's supersteps.
struct common_options {
  std::uint64_t seed = 1;
  std::vector<std::string> forms{"selector", "lambda", "rma", "alltoallv"};
};

/// Adds --seed, --forms and --superstep to `app`.
inline void add_common_options(CLI::App& app, common_options& options) {
  app.add_option("--seed", options.seed, "seed of the random input");
  app.add_option("--forms", options.forms, "forms to run: selector, lambda, rma, alltoallv")
      ->check(CLI::IsMember({"selector", "lambda", "rma", "alltoallv"}))
      ->delimiter(',');
  app.add_option("--superstep", superstep_items,
                 "items a PE sends in one superstep of the alltoallv form at most")
      ->check(positive())
      ->capture_default_str();
}

/// The options of the matrix apps: the matrix's size.
struct matrix_options {
  std::int64_t rows = 100'000;
  std::int64_t nonzeros = 10;
};

/// Adds --rows and --nonzeros to `app`.
inline void add_matrix_options(CLI::App& app, matrix_options& options) {
  app.add_option("--rows", options.rows, "rows per PE")->check(positive());
  app.add_option("--nonzeros", options.nonzeros, "nonzeros per row")->check(positive());
}

/// The options of the graph apps: which random graph, and its size.
struct graph_options {
  std::string model = "flat";
  std::int64_t rows = 10'000;
  std::int64_t nonzeros = 35;
  std::vector<std::int64_t> stars;  // kronecker only; derived from rows and nonzeros if empty

  /// The graph these options describe, on `npes` PEs.
  graph_spec spec(int npes, std::uint64_t seed) const {
    graph_spec result{graph_model_named(model), rows * npes, nonzeros, stars, seed};
    if (result.model == graph_model::kronecker && result.stars.empty())
      result.stars = kronecker_stars(result.vertices, nonzeros);
    return result;
  }
};

/// Adds --graph, --rows, --nonzeros and --stars to `app`.
inline void add_graph_options(CLI::App& app, graph_options& options) {
  app.add_option("--graph", options.model, "random graph: flat (Erdős–Rényi), geometric, kronecker")
      ->check(CLI::IsMember({"flat", "geometric", "kronecker"}));
  app.add_option("--rows", options.rows, "vertices (rows) per PE; kronecker: about")
      ->check(positive());
  app.add_option("--nonzeros", options.nonzeros, "mean degree (nonzeros per row); kronecker: about")
      ->check(positive());
  app.add_option("--stars", options.stars,
                 "kronecker: the star sizes m of the factors K_{1,m} (fixes the size)")
      ->check(positive())
      ->delimiter(',');
}

/// A graph drawn from the command line: what it is, and this PE's rows of its lower triangle.
struct drawn_graph {
  graph_spec spec;
  sparse_rows lower;
};

/// Draws the graph `options` describe; when it cannot be drawn (a Kronecker graph too large),
/// PE 0 says why, prefixed with `program`, and the result is empty. Every PE sees the same.
inline std::optional<drawn_graph> draw_graph(const troupe::pgas::world& world,
                                             const graph_options& options, std::uint64_t seed,
                                             const char* program) {
  try {
    drawn_graph drawn;
    drawn.spec = options.spec(world.npes(), seed);
    drawn.lower = lower_triangle(world, drawn.spec);
    return drawn;
  } catch (const std::exception& failure) {
    if (world.pe() == 0) std::fprintf(stderr, "%s: %s\n", program, failure.what());
    return std::nullopt;
  }
}

/// Parses the command line; the exit code when the program should end now (after --help, or a
/// bad command line, which PE 0 reports).
inline std::optional<int> parse_command_line(CLI::App& app, const troupe::pgas::world& world,
                                             int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& failure) {
    return world.pe() == 0 ? app.exit(failure) : (failure.get_exit_code() != 0 ? 2 : 0);
  }
}

/// What one app does with one form: runs it (timed), then checks it (empty when right).
struct kernel_run {
  std::function<void(troupe::pgas::world&, form)> run;
  std::function<std::string(troupe::pgas::world&, form)> check;
};

/// Parses `--forms`, runs and checks each form, prints one line each on PE 0. Returns the exit
/// code: 0 when every check passed.
inline int run_forms(troupe::pgas::world& world, const std::string& kernel, std::int64_t per_pe,
                     const std::vector<std::string>& form_names, const kernel_run& work) {
  int status = 0;
  for (const std::string& text : form_names) {
    const form how = form_named(text);
    world.barrier();
    const double start = MPI_Wtime();
    work.run(world, how);
    world.barrier();
    const double seconds =
        world.all_reduce(MPI_Wtime() - start, troupe::pgas::world::reduction::max);
    const std::string wrong = work.check(world, how);
    if (world.pe() == 0)
      std::printf("%s %-8s %d PEs: %lld per PE in %.3f s, %.3g per second per PE, check %s\n",
                  kernel.c_str(), text.c_str(), world.npes(), static_cast<long long>(per_pe),
                  seconds, static_cast<double>(per_pe) / seconds,
                  wrong.empty() ? "ok" : ("FAILED: " + wrong).c_str());
    if (!wrong.empty()) status = 1;
  }
  return world.all_reduce(status, troupe::pgas::world::reduction::max);
}

}  // namespace bale
