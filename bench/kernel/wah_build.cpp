// The WAH index build time against the column's size: the pipeline of kernel actors against the
// host build on one thread (the reference) and on every hardware thread.
#include <random>
#include <thread>

#include "kernel/kernel_bench.hpp"
#include "wah_pipeline.hpp"

namespace troupe::bench::kernel_bench {

namespace {

using troupe::wah::u32;
using troupe::wah::wah_index;

struct wah_case {
  std::vector<u32> column;
  wah_index reference;
};

std::string compare_index(const wah_index& reference, const wah_index& built) {
  if (built.words.empty()) return "no index was built";
  return troupe::wah::first_difference(reference, built);
}

device_variant on_host(std::shared_ptr<const wah_case> input, unsigned threads) {
  auto built = std::make_shared<wah_index>();
  device_variant variant;
  variant.name = "native-cpu-" + std::to_string(threads);
  variant.prepare = [built] { *built = {}; };
  variant.run = [input, built, threads] {
    *built = troupe::wah::build_on_cpu(input->column, threads);
  };
  variant.check = [input, built] { return compare_index(input->reference, *built); };
  return variant;
}

}  // namespace

void run_wah_build(device_bench& bench, actor_system& system, const troupe::device& dev,
                   const device_label& label, bool gpu) {
  if (!bench.selected("wah_build")) return;
  std::vector<std::size_t> sizes =
      gpu ? std::vector<std::size_t>{10'000, 100'000, 1'000'000, 10'000'000, 20'000'000}
          : std::vector<std::size_t>{10'000, 100'000, 1'000'000};
  if (bench.quick()) sizes = {10'000};
  auto builder = std::make_shared<troupe::wah::device_builder>(system, dev);
  const unsigned all_threads = std::max(1u, std::thread::hardware_concurrency());
  // 1000 values, and values over all 32 bits (8 sort passes on the device, 4 on the host).
  for (u32 cardinality : {1000u, 0u}) {
    for (std::size_t n : sizes) {
      auto input = std::make_shared<wah_case>();
      std::mt19937 random(static_cast<unsigned>(n));
      input->column.resize(n);
      for (auto& v : input->column)
        v = static_cast<u32>(cardinality == 0 ? random() : random() % cardinality);
      input->reference = troupe::wah::build_on_cpu(input->column, all_threads);
      comparison rows{
          .benchmark = "wah_build",
          .parameters = "rows=" + std::to_string(n) + ";cardinality=" + std::to_string(cardinality),
          .device = label,
          .metric = "Mrows/s",
          .units_per_run = static_cast<double>(n) * 1e-6};
      auto built = std::make_shared<wah_index>();
      device_variant troupe_side;
      troupe_side.name = "troupe";
      troupe_side.prepare = [built] { *built = {}; };
      troupe_side.run = [builder, input, built] {
        *built = builder->build(input->column).get();  // the column is copied into the request
      };
      troupe_side.check = [input, built] { return compare_index(input->reference, *built); };
      rows.variants.push_back(std::move(troupe_side));
      rows.variants.push_back(on_host(input, 1));
      rows.variants.push_back(on_host(input, all_threads));
      rows.ratios.emplace_back("troupe", rows.variants[1].name);
      rows.ratios.emplace_back("troupe", rows.variants[2].name);
      bench.compare(rows);
    }
  }
}

}  // namespace troupe::bench::kernel_bench
