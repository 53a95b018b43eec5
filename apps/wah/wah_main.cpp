// wah-index: builds the WAH bitmap index of a random column on every device (a pipeline of
// kernel actors) and on the host, checks that all are bit-identical, and prints the times.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include "wah_pipeline.hpp"

namespace {

using troupe::wah::u32;
using clock_type = std::chrono::steady_clock;

double milliseconds_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t rows = 1'000'000;
  u32 cardinality = 1000;
  bool profile = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--rows") {
      rows = std::stoull(argv[i + 1]);
    } else if (option == "--profile") {
      profile = std::string{argv[i + 1]} == "yes";
    } else if (option == "--cardinality") {
      cardinality = static_cast<u32>(std::stoul(argv[i + 1]));
    } else {
      std::cerr << "usage: wah-index [--rows N] [--cardinality C (0: any 32-bit value)] "
                   "[--profile yes]\n";
      return EXIT_FAILURE;
    }
  }
  std::mt19937 random(42);
  std::vector<u32> column(rows);
  for (auto& v : column) v = static_cast<u32>(cardinality == 0 ? random() : random() % cardinality);

  auto start = clock_type::now();
  const auto reference = troupe::wah::build_on_cpu(column, 1);
  std::cout << rows << " rows, " << reference.values.size() << " values, " << reference.words.size()
            << " words\n";
  std::cout << "  host, 1 thread:   " << milliseconds_since(start) << " ms\n";
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  start = clock_type::now();
  bool same = troupe::wah::build_on_cpu(column, threads) == reference;
  std::cout << "  host, " << threads << " threads: " << milliseconds_since(start) << " ms"
            << (same ? "" : "  DIFFERS") << "\n";

  troupe::actor_system sys;
  // GPUs where there are any; else every device (PoCL's CPU device, say).
  auto devices = sys.devices().type(troupe::device_type::gpu).all();
  if (devices.empty()) devices = sys.devices().all();
  for (const auto& dev : devices) {
    troupe::wah::device_builder builder(sys, dev);
    builder.build(column).get();  // compiles the kernels
    start = clock_type::now();
    const auto built = builder.build(column).get();
    const auto difference = troupe::wah::first_difference(reference, built);
    std::cout << "  " << dev.name() << ": " << milliseconds_since(start) << " ms"
              << (difference.empty() ? "" : "  DIFFERS: " + difference) << "\n";
    same = same && difference.empty();
    if (profile) {
      for (const auto& [stage, seconds] : builder.stage_seconds(column)) {
        std::cout << "    " << stage << ": " << seconds * 1e3 << " ms\n";
      }
    }
  }
  std::cout << (same ? "all indexes are identical\n" : "the indexes differ\n");
  return same ? EXIT_SUCCESS : EXIT_FAILURE;
}
