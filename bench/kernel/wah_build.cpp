// The WAH index build time against the column's size: the pipeline of kernel actors against the
// host build on one thread (the reference) and on every hardware thread.
#include <random>
#include <span>
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
                   const device_label& label, bool gpu, const std::vector<std::size_t>& only) {
  if (!bench.selected("wah_build")) return;
  std::vector<std::size_t> sizes =
      gpu ? std::vector<std::size_t>{10'000, 100'000, 1'000'000, 10'000'000, 20'000'000}
          : std::vector<std::size_t>{10'000, 100'000, 1'000'000};
  if (!only.empty()) sizes = only;
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
      auto column = std::make_shared<std::vector<u32>>();
      device_variant troupe_side;
      troupe_side.name = "troupe";
      // The column is copied untimed, then moved into the request; the index is read back.
      troupe_side.prepare = [built, column, input] {
        *built = {};
        *column = input->column;
      };
      troupe_side.run = [builder, built, column] {
        *built = builder->build(std::move(*column)).get();
      };
      troupe_side.check = [input, built] { return compare_index(input->reference, *built); };
      rows.variants.push_back(std::move(troupe_side));
      rows.variants.push_back(guarded("troupe-resident", [&] {
        // The column already on the device, the index left there: the pipeline's own time.
        auto memory = dev.allocate<u32>(n);
        memory.write(std::span<const u32>{input->column}).get();
        troupe::kernel::mem_ref<u32> on_device{memory, n, troupe::make_ready_future().share()};
        auto outputs = std::make_shared<troupe::message>();
        device_variant resident;
        resident.prepare = [outputs] { *outputs = {}; };
        resident.run = [builder, on_device, outputs] {
          *outputs = request<troupe::message>(builder->resident_pipeline(), on_device).get();
          for (std::size_t i = 0; i < outputs->size(); ++i) {
            outputs->get_as<troupe::kernel::mem_ref<u32>>(i).ready().get();
          }
        };
        resident.check = [input, outputs] {
          // Sizes here; the bytes are the troupe variant's check (the same pipeline).
          if (!outputs->match<troupe::kernel::mem_ref<u32>, troupe::kernel::mem_ref<u32>,
                              troupe::kernel::mem_ref<u32>>())
            return std::string{"no index was built"};
          const auto words = outputs->get_as<troupe::kernel::mem_ref<u32>>(0).size();
          return words == input->reference.words.size()
                     ? std::string{}
                     : "the index has " + std::to_string(words) + " words, expected " +
                           std::to_string(input->reference.words.size());
        };
        return resident;
      }));
      rows.variants.push_back(on_host(input, 1));
      rows.variants.push_back(on_host(input, all_threads));
      for (const char* side : {"troupe", "troupe-resident"}) {
        rows.ratios.emplace_back(side, rows.variants[2].name);
        rows.ratios.emplace_back(side, rows.variants[3].name);
      }
      bench.compare(rows);
    }
  }
}

}  // namespace troupe::bench::kernel_bench
