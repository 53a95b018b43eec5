// partition (HPXCL) and multi_partition: elements split into parts, each copied in, computed and
// copied back on its own queue from and to pinned memory, all parts overlapping; on one device,
// then spread over 1..N devices of one backend and type. Rated in GB/s, copies in and out
// counted; native-copy-only, the same copies without the kernel, is the ceiling.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "device/benchmarks.hpp"
#include "device/kernels.hpp"
#include "troupe/async/when_all.hpp"

namespace troupe::bench {
namespace {

// Parts per device, as in HPXCL.
constexpr std::size_t partitions = 4;

// The check of the partition kernel's output: sqrt(sin^2 x + cos^2 x) is 1 for every x.
std::string ones(std::span<const float> output, std::size_t) {
  return compare_floats(output, 1e-5, [](std::size_t) { return 1.0; });
}

// The check of the copies alone: each element is its index again, exactly.
std::string indices(std::span<const float> output, std::size_t first) {
  return compare_floats(output, 0.0, [first](std::size_t index) {
    return static_cast<double>(static_cast<float>(first + index));
  });
}

// troupe's side over `group`: per device a host_buffer in and out, and per part a device_queue
// and a buffer; write -> launch(after) -> read_into(after) on every part, then one when_all.
device_variant troupe_partition(const std::vector<const target*>& group,
                                const partition_problem& problem) {
  return guarded("troupe", [&] {
    struct part {
      troupe::device_queue queue;
      troupe::buffer<float> memory;
      slice range;  // within the member's slice
    };
    struct member {
      troupe::program program;
      troupe::host_buffer<float> input;
      troupe::host_buffer<float> output;
      slice range;
      std::vector<part> parts;
    };
    auto members = std::make_shared<std::vector<member>>();
    std::vector<slice> slices = split(problem.count, group.size());
    for (std::size_t index = 0; index < group.size(); ++index) {
      const troupe::device& device = group[index]->device;
      member joined{device
                        .compile(kernels::partition.text(device.backend()),
                                 kernels::partition.options(device.backend()))
                        .get(),
                    device.allocate_host<float>(slices[index].count),
                    device.allocate_host<float>(slices[index].count),
                    slices[index],
                    {}};
      fill_indices(joined.input.span(), joined.range.first);
      for (slice range : split(joined.range.count, problem.partitions))
        joined.parts.push_back({device.make_queue(), device.allocate<float>(range.count), range});
      members->push_back(std::move(joined));
    }
    device_variant variant;
    variant.prepare = [members] {
      for (member& each : *members) std::fill(each.output.begin(), each.output.end(), 0.0f);
    };
    variant.run = [members] {
      std::vector<troupe::future<void>> finished;
      for (member& each : *members) {
        for (part& piece : each.parts) {
          const std::size_t count = piece.range.count;
          auto written = piece.queue.write(piece.memory, 0, each.input, piece.range.first, count);
          auto computed = piece.queue.launch(each.program, kernels::partition.name,
                                             troupe::nd_range{{count}}, troupe::after(written),
                                             piece.memory, static_cast<unsigned>(count));
          finished.push_back(piece.queue.read_into(piece.memory, 0, each.output, piece.range.first,
                                                   count, troupe::after(computed)));
        }
      }
      for (troupe::future<void>& each : troupe::when_all(std::move(finished)).get()) each.get();
    };
    variant.check = [members] {
      for (member& each : *members) {
        std::string wrong = ones(each.output.span(), each.range.first);
        if (!wrong.empty()) return wrong;
      }
      return std::string{};
    };
    return variant;
  });
}

// One comparison of the partition problem of `count` elements over `group`.
void compare_partition(device_bench& bench, const std::string& benchmark,
                       const std::string& parameters, const std::vector<const target*>& group,
                       std::size_t count) {
  const target& first = *group.front();
  comparison rows{.benchmark = benchmark,
                  .parameters = parameters,
                  .device = first.label(),
                  .metric = "GB/s",
                  .units_per_run = 2.0 * static_cast<double>(count * sizeof(float)) / 1e9};
  // The device column names the model; how many take part is a parameter (devices=N).
  for (const target* member : group)
    if (rows.device.name.find(member->device.name()) == std::string::npos)
      rows.device.name += " + " + member->device.name();
  partition_problem problem{count, partitions, true, ones};
  rows.variants.push_back(troupe_partition(group, problem));

  std::vector<native_baseline*> natives;
  for (const target* member : group)
    if (member->native) natives.push_back(member->native.get());
  if (natives.size() == group.size()) {
    rows.variants.push_back(first.native->partition(natives, problem));
    rows.ratios.emplace_back("troupe", rows.variants.back().name);
    partition_problem copies{count, partitions, false, indices};
    rows.variants.push_back(first.native->partition(natives, copies));
  } else {
    std::printf("%s: no native rows on %s: %s\n", benchmark.c_str(), rows.device.name.c_str(),
                first.native ? "a device of the group has no native baseline"
                             : first.native_missing.c_str());
  }
  std::vector<measurement> measured = bench.compare(rows);

  // The share of the copy-only bandwidth each computing variant reaches.
  const measurement& ceiling = measured.back();
  if (rows.variants.size() < 3 || !ceiling.usable()) return;
  for (std::size_t index = 0; index + 1 < measured.size(); ++index) {
    if (!measured[index].usable()) continue;
    std::printf(
        "  %s reaches %.1f%% of native-copy-only's bandwidth\n", measured[index].variant.c_str(),
        100.0 * device_bench::rate(rows, measured[index]) / device_bench::rate(rows, ceiling));
  }
  std::printf("\n");
}

// 2^m * 1024 * 256 * 4 floats, HPXCL's sizes.
std::size_t partition_count(int m) {
  return (std::size_t{1} << m) * 1024 * 256 * 4;
}

std::string size_parameters(std::size_t count) {
  return "n=" + std::to_string(count) + ";partitions=" + std::to_string(partitions) +
         ";bytes=" + std::to_string(count * sizeof(float));
}

}  // namespace

void run_partition(device_bench& bench, const std::vector<target>& targets) {
  if (!bench.selected("partition")) return;
  for (const target& under_test : targets) {
    const int largest = !bench.quick() ? 8 : under_test.small() ? 1 : 3;
    for (int m = 1; m <= largest; ++m) {
      const std::size_t count = partition_count(m);
      // troupe, native and native-copy-only hold the elements at once.
      if (!under_test.fits(3 * count * sizeof(float))) {
        bench.skip("partition", under_test.device.name(),
                   "m=" + std::to_string(m) + " needs more memory than the device has to spare");
        break;
      }
      compare_partition(bench, "partition", "m=" + std::to_string(m) + ";" + size_parameters(count),
                        {&under_test}, count);
    }
  }
}

void run_multi_partition(device_bench& bench, const std::vector<target>& targets) {
  if (!bench.selected("multi_partition")) return;
  // Groups of one backend and type, GPUs only; without any GPU, the others, so that the code
  // runs on every machine.
  bool any_gpu = false;
  for (const target& each : targets) any_gpu = any_gpu || !each.small();
  std::map<std::pair<troupe::backend, troupe::device_type>, std::vector<const target*>> groups;
  for (const target& each : targets)
    if (any_gpu != each.small())
      groups[{each.device.backend(), each.device.info().type}].push_back(&each);
  if (!any_gpu) std::printf("multi_partition: no GPUs here; running on the other devices\n\n");

  for (const auto& [kind, group] : groups) {
    // Strong scaling: the same elements, spread over more devices; at a middle size (m=6) and at
    // partition's largest (m=8).
    std::vector<int> sizes{6, 8};
    if (bench.quick()) sizes = {group.front()->small() ? 1 : 3};
    for (int m : sizes) {
      const std::size_t count = partition_count(m);
      for (std::size_t devices = 1; devices <= group.size(); ++devices) {
        std::vector<const target*> members(group.begin(), group.begin() + devices);
        if (!members.front()->fits(3 * count * sizeof(float) / devices)) {
          bench.skip(
              "multi_partition", members.front()->device.name(),
              "n=" + std::to_string(count) + " needs more memory than the device has to spare");
          continue;
        }
        compare_partition(bench, "multi_partition",
                          "devices=" + std::to_string(devices) + ";m=" + std::to_string(m) + ";" +
                              size_parameters(count),
                          members, count);
      }
    }
  }
}

}  // namespace troupe::bench
