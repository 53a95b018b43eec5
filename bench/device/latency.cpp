// launch_latency, copy_latency and completion: one small command at a time, each waited for
// before the next, so the time is the round trip through the runtime and the driver. Each run
// does many of them; the time columns are per launch (per round trip).
#include <memory>
#include <span>

#include "device/benchmarks.hpp"
#include "device/kernels.hpp"

namespace troupe::bench {
namespace {

// Launches (round trips) per run.
constexpr int round_trips = 1000;
// Launches in the dependent chain of the completion benchmark.
constexpr int chain_length = 100;

// How troupe issues the tick launches of one run.
enum class issue {
  one_at_a_time,  // launch(...).get(), round_trips times
  chained,        // chain_length launches, each after(the previous), one get() at the end
};

// troupe's tick launches on `device`; `name` is the variant's name.
device_variant troupe_ticks(const std::string& name, const troupe::device& device, issue how) {
  return guarded(name, [&] {
    struct state {
      troupe::device device;
      troupe::program program;
      troupe::buffer<int> counter;
    };
    auto run = std::make_shared<state>(state{
        device,
        device
            .compile(kernels::tick.text(device.backend()), kernels::tick.options(device.backend()))
            .get(),
        device.allocate<int>(1)});
    const int launches = how == issue::chained ? chain_length : round_trips;
    const troupe::nd_range one{{1}};
    device_variant variant;
    variant.prepare = [run] { run->counter.fill(0).get(); };
    if (how == issue::chained) {
      variant.run = [run, one] {
        auto last = run->device.launch(run->program, kernels::tick.name, one, run->counter);
        for (int launch = 1; launch < chain_length; ++launch)
          last = run->device.launch(run->program, kernels::tick.name, one, troupe::after(last),
                                    run->counter);
        last.get();
      };
    } else {
      variant.run = [run, one] {
        for (int launch = 0; launch < round_trips; ++launch)
          run->device.launch(run->program, kernels::tick.name, one, run->counter).get();
      };
    }
    variant.check = [run, launches] {
      const int counted = run->counter.read().get().at(0);
      return counted == launches ? std::string{}
                                 : "the counter reads " + std::to_string(counted) + ", expected " +
                                       std::to_string(launches);
    };
    return variant;
  });
}

}  // namespace

void run_launch_latency(device_bench& bench, const std::vector<target>& targets) {
  if (!bench.selected("launch_latency")) return;
  for (const target& under_test : targets) {
    comparison rows{.benchmark = "launch_latency",
                    .parameters = "launches=" + std::to_string(round_trips),
                    .device = under_test.label(),
                    .operations = round_trips};
    rows.variants.push_back(troupe_ticks("troupe", under_test.device, issue::one_at_a_time));
    if (under_test.native) {
      rows.variants.push_back(under_test.native->launch_latency(round_trips));
      rows.ratios.emplace_back("troupe", rows.variants.back().name);
    }
    bench.compare(rows);
  }
}

void run_copy_latency(device_bench& bench, const std::vector<target>& targets) {
  if (!bench.selected("copy_latency")) return;
  for (const target& under_test : targets) {
    comparison rows{.benchmark = "copy_latency",
                    .parameters = "round_trips=" + std::to_string(round_trips) + ";bytes=4",
                    .device = under_test.label(),
                    .operations = round_trips};
    rows.variants.push_back(guarded("troupe", [&] {
      struct state {
        troupe::buffer<int> value;
        int wrong = 0;
      };
      auto run = std::make_shared<state>(state{under_test.device.allocate<int>(1), 0});
      device_variant variant;
      variant.prepare = [run] { run->wrong = 0; };
      // A 4-byte write from pageable memory, a read after it, one wait: as the native side does.
      variant.run = [run] {
        for (int sent = 0; sent < round_trips; ++sent) {
          int received = -1;
          auto written = run->value.write(&sent, 1);
          run->value.read_into(std::span<int>(&received, 1), troupe::after(written)).get();
          if (received != sent) ++run->wrong;
        }
      };
      variant.check = [run] { return wrong_round_trips(run->wrong); };
      return variant;
    }));
    if (under_test.native) {
      rows.variants.push_back(under_test.native->copy_latency(round_trips));
      rows.ratios.emplace_back("troupe", rows.variants.back().name);
    }
    bench.compare(rows);
  }
}

void run_completion(device_bench& bench, const std::vector<target>& targets,
                    const troupe::config& config) {
  if (!bench.selected("completion")) return;
  // One actor system per way of learning that device work finished; each finds every device.
  troupe::config polling_config = config;
  polling_config.device_completion = "polling";
  troupe::config callback_config = config;
  callback_config.device_completion = "callback";
  troupe::actor_system polling_system{polling_config};
  troupe::actor_system callback_system{callback_config};
  troupe::device_selection polling_devices = polling_system.devices();
  troupe::device_selection callback_devices = callback_system.devices();

  for (const target& under_test : targets) {
    const troupe::device& polling = polling_devices[under_test.index];
    const troupe::device& callback = callback_devices[under_test.index];
    for (issue how : {issue::one_at_a_time, issue::chained}) {
      const int launches = how == issue::chained ? chain_length : round_trips;
      comparison rows{
          .benchmark = "completion",
          .parameters = std::string(how == issue::chained ? "case=chain" : "case=round_trip") +
                        ";launches=" + std::to_string(launches),
          .device = under_test.label(),
          .operations = static_cast<double>(launches)};
      rows.variants.push_back(troupe_ticks("troupe-polling", polling, how));
      rows.variants.push_back(troupe_ticks("troupe-callback", callback, how));
      rows.ratios.emplace_back("troupe-callback", "troupe-polling");
      bench.compare(rows);
    }
  }
}

}  // namespace troupe::bench
