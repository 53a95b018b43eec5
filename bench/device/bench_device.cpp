// bench-device: troupe's device layer against the same work written with raw OpenCL and the raw
// CUDA driver API, side by side in one process on every device present (BENCHMARKS.md). The
// CUDA driver is loaded at run time, so the OpenCL rows run on machines without one.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "device/benchmarks.hpp"

#ifdef TROUPE_BENCH_HAS_CUDA
#include "device/native_cuda.hpp"
#endif

namespace troupe::bench {

device_label target::label() const {
  return {std::string(troupe::to_string(device.backend())), device.name()};
}

namespace {

constexpr std::string_view suite = "device";

std::string own_usage() {
  return usage(suite) +
         "  --png-dir DIR  write the Mandelbrot PNGs into DIR (default: a temporary folder)\n"
         "  --keep-png     keep the PNGs (they are removed at the end otherwise)\n"
         "  --gpus-only    leave out CPU devices (PoCL), for full-size runs on a GPU machine\n"
         "  --troupe.*     troupe's own settings, such as --troupe.device-completion=callback\n";
}

// Takes --png-dir, --keep-png and --gpus-only out of `arguments`, leaving the harness's options.
png_settings take_own_options(std::vector<std::string>& arguments, bool& gpus_only) {
  png_settings png;
  std::vector<std::string> rest;
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    if (arguments[index] == "--gpus-only") {
      gpus_only = true;
    } else if (arguments[index] == "--keep-png") {
      png.keep = true;
    } else if (arguments[index] == "--png-dir") {
      if (index + 1 >= arguments.size())
        throw usage_error("--png-dir: expected a folder after it, found none");
      png.folder = arguments[++index];
    } else {
      rest.push_back(arguments[index]);
    }
  }
  arguments = std::move(rest);
  return png;
}

// The native baseline of `device`, the `ordinal`-th device of its backend in troupe's list.
std::unique_ptr<native_baseline> open_baseline(const troupe::device& device, std::size_t ordinal,
                                               std::string& why) {
  if (device.backend() == troupe::backend::opencl)
    return open_opencl_baseline(ordinal, device.name(), why);
#ifdef TROUPE_BENCH_HAS_CUDA
  return open_cuda_baseline(static_cast<int>(ordinal), device.name(), why);
#else
  why = "bench-device was built without CUDA's headers (TROUPE_WITH_CUDA=OFF)";
  return nullptr;
#endif
}

// Every device troupe finds, GPUs first, each with its native baseline where one opens; prints
// what was found and what is skipped.
std::vector<target> find_targets(troupe::actor_system& system, bool gpus_only) {
  troupe::device_selection devices = system.devices();
  std::vector<target> targets;
  std::size_t opencl_devices = 0;
  std::size_t cuda_devices = 0;
  for (std::size_t index = 0; index < devices.size(); ++index) {
    target found;
    found.device = devices[index];
    found.index = index;
    std::size_t& ordinal =
        found.device.backend() == troupe::backend::opencl ? opencl_devices : cuda_devices;
    found.native = open_baseline(found.device, ordinal++, found.native_missing);
    targets.push_back(std::move(found));
  }
  // Filtered only now: the native side finds its device by its index among all of them.
  if (gpus_only) {
    std::erase_if(targets, [](const target& each) {
      return each.device.info().type != troupe::device_type::gpu;
    });
  }
  std::stable_partition(targets.begin(), targets.end(),
                        [](const target& each) { return !each.small(); });

  std::cout << "devices:\n";
  for (const target& each : targets) {
    std::cout << "  " << each.label().backend << ": " << each.device.name() << " ("
              << troupe::to_string(each.device.info().type)
              << "), native side: " << (each.native ? "yes" : "none, " + each.native_missing)
              << "\n";
  }
  for (const auto& absent : devices.unavailable())
    std::cout << "  " << troupe::to_string(absent.backend) << ": no devices: " << absent.reason
              << "\n";
  if (cuda_devices == 0) {
    std::string why = "troupe found no CUDA device";
#ifdef TROUPE_BENCH_HAS_CUDA
    std::string native_why;
    if (!cuda::load(native_why)) why += "; native CUDA: " + native_why;
#else
    why += "; bench-device was built without CUDA's headers";
#endif
    std::cout << "CUDA rows are skipped: " << why << "\n";
  }
  std::cout << std::endl;
  return targets;
}

}  // namespace
}  // namespace troupe::bench

int main(int argc, char** argv) {
  using namespace troupe::bench;
  try {
    // troupe takes its --troupe.* options (and its environment variables) first.
    troupe::config config(argc, argv);
    std::vector<std::string> arguments = config.remaining_args;
    bool gpus_only = false;
    [[maybe_unused]] png_settings png = take_own_options(arguments, gpus_only);
    std::vector<char*> pointers;
    for (std::string& argument : arguments) pointers.push_back(argument.data());
    options settings = parse_options(suite, static_cast<int>(pointers.size()), pointers.data());
    if (settings.help) {
      std::cout << own_usage();
      return 0;
    }
    config.threads = static_cast<std::size_t>(settings.threads);
    // Programs are built in memory only: the compile rows build a new program every run, which
    // would otherwise fill the disk cache.
    config.kernel_cache = "off";

    troupe::actor_system system{config};
    std::vector<target> targets = find_targets(system, gpus_only);
    device_bench bench{settings};
    std::cout << "bench-device: " << settings.threads << " threads, " << settings.warmup
              << " warm-up + " << settings.runs << " timed runs per variant"
              << (settings.quick ? " (quick)" : "") << ", CSV " << settings.csv.string() << "\n\n";

    run_stencil(bench, targets);
    run_partition(bench, targets);
    run_multi_partition(bench, targets);
    run_launch_latency(bench, targets);
    run_copy_latency(bench, targets);
    run_completion(bench, targets, config);
#ifdef TROUPE_BENCH_HAS_PNG
    run_mandelbrot(bench, targets, png);
#else
    if (bench.selected("mandelbrot"))
      std::cout << "mandelbrot: not built: libpng was not found when bench-device was "
                   "configured\n\n";
#endif
    return bench.finish();
  } catch (const usage_error& error) {
    std::cerr << "bench-device: " << error.what() << "\n\n" << own_usage();
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "bench-device: " << error.what() << std::endl;
    return 1;
  }
}
