// stencil (HPXCL): write the input, run the 3-point stencil, read the output back, for n from
// 10^3 to 10^8; and building the program, timed in rows of its own.
#include <limits>
#include <memory>
#include <random>
#include <span>

#include "device/benchmarks.hpp"
#include "device/kernels.hpp"

namespace troupe::bench {
namespace {

// The source of the stencil program with one more, uniquely named, empty kernel per call: a
// fresh program for every compiler and driver cache, this process's and earlier ones' alike.
// The empty kernel takes a parameter: NVIDIA's OpenCL (driver 580) emits PTX that ptxas rejects
// for a kernel without any when asked for argument info, as troupe asks.
std::function<std::string()> fresh_sources(troupe::backend language) {
  auto count = std::make_shared<std::size_t>(0);
  const std::string prefix = "compiled_" + std::to_string(std::random_device{}()) + "_";
  return [count, prefix, language] {
    std::string name = prefix + std::to_string(++*count);
    return kernels::stencil.text(language) +
           (language == troupe::backend::cuda
                ? "extern \"C\" __global__ void " + name + "(int* unused) {}\n"
                : "__kernel void " + name + "(__global int* unused) {}\n");
  };
}

void compare_compile(device_bench& bench, const target& under_test) {
  const troupe::device& device = under_test.device;
  compile_problem problem{fresh_sources(device.backend())};
  // A benchmark name of its own, so plots keep compile times apart from the size sweep.
  comparison rows{.benchmark = "stencil_compile",
                  .parameters = "program=stencil",
                  .device = under_test.label()};
  rows.variants.push_back(guarded("troupe-compile", [&] {
    struct state {
      troupe::device device;
      std::function<std::string()> fresh_source;
      std::string options;
      troupe::program program;
    };
    auto run = std::make_shared<state>(
        state{device, problem.fresh_source, kernels::stencil.options(device.backend()), {}});
    device_variant variant;
    variant.prepare = [run] { run->program = troupe::program{}; };
    variant.run = [run] {
      run->program = run->device.compile(run->fresh_source(), run->options).get();
    };
    variant.check = [run] { return run->program.valid() ? "" : "no program was built"; };
    return variant;
  }));
  if (under_test.native) {
    rows.variants.push_back(under_test.native->compile(problem));
    rows.ratios.emplace_back("troupe-compile", "native-compile");
  }
  bench.compare(rows);
}

// troupe's side: `input` through device buffers and back, from and to pageable memory
// (std::vector) or pinned memory (host_buffer), as `Host` says.
template <class Host>
device_variant troupe_stencil(const std::string& name, const troupe::device& device,
                              const troupe::program& program, std::span<const float> input,
                              const std::function<std::string(std::span<const float>)>& check) {
  return guarded(name, [&] {
    struct state {
      troupe::program program;
      troupe::buffer<float> input;
      troupe::buffer<float> output;
      Host source;
      Host result;
    };
    const std::size_t count = input.size();
    auto run = std::make_shared<state>(
        state{program, device.allocate<float>(count), device.allocate<float>(count), {}, {}});
    if constexpr (std::is_same_v<Host, std::vector<float>>) {
      run->source.assign(input.begin(), input.end());
      run->result.resize(count);
    } else {
      run->source = device.allocate_host<float>(count);
      run->result = device.allocate_host<float>(count);
      std::copy(input.begin(), input.end(), run->source.begin());
    }
    device_variant variant;
    variant.prepare = [run] {
      std::fill(run->result.begin(), run->result.end(), std::numeric_limits<float>::quiet_NaN());
    };
    variant.run = [run, device, count] {
      constexpr bool pageable = std::is_same_v<Host, std::vector<float>>;
      auto written = [&] {
        if constexpr (pageable)
          return run->input.write(std::span<const float>(run->source));
        else
          return run->input.write(run->source);
      }();
      auto computed =
          device.launch(run->program, "stencil", troupe::nd_range{{count}}, troupe::after(written),
                        run->input, run->output, static_cast<unsigned>(count));
      if constexpr (pageable)
        run->output.read_into(std::span<float>(run->result), troupe::after(computed)).get();
      else
        run->output.read_into(run->result, troupe::after(computed)).get();
    };
    variant.check = [run, check, count] {
      return check(std::span<const float>(run->result.data(), count));
    };
    return variant;
  });
}

}  // namespace

void run_stencil(device_bench& bench, const std::vector<target>& targets) {
  if (!bench.selected("stencil")) return;
  for (const target& under_test : targets) {
    const troupe::device& device = under_test.device;
    compare_compile(bench, under_test);
    troupe::program program;
    try {
      program = device
                    .compile(kernels::stencil.text(device.backend()),
                             kernels::stencil.options(device.backend()))
                    .get();
    } catch (const std::exception& error) {
      bench.skip("stencil", device.name(),
                 std::string("troupe could not build it: ") + error.what());
      continue;
    }
    const std::size_t largest = !bench.quick()       ? 100'000'000
                                : under_test.small() ? 100'000
                                                     : 1'000'000;
    for (std::size_t count = 1000; count <= largest; count *= 10) {
      const bool cuda = device.backend() == troupe::backend::cuda;
      // Two buffers for each of troupe, troupe-pinned and the two native variants.
      if (!under_test.fits(4 * 2 * count * sizeof(float))) {
        bench.skip(
            "stencil", device.name(),
            "n=" + std::to_string(count) + " needs more memory than the device has to spare");
        continue;
      }
      // Positive inputs, so a relative tolerance means the same everywhere.
      std::vector<float> input(count);
      for (std::size_t index = 0; index < count; ++index)
        input[index] = 1.0f + static_cast<float>(index % 1024) / 1024.0f;
      std::vector<float> expected(count);
      for (std::size_t index = 0; index < count; ++index)
        expected[index] = index == 0 || index == count - 1
                              ? input[index]
                              : 0.5f * input[index - 1] + input[index] + 0.5f * input[index + 1];
      std::function<std::string(std::span<const float>)> check =
          [&expected](std::span<const float> output) {
            return compare_floats(output, 1e-5, [&](std::size_t index) { return expected[index]; });
          };

      comparison rows{.benchmark = "stencil",
                      .parameters = "n=" + std::to_string(count),
                      .device = under_test.label()};
      rows.variants.push_back(
          troupe_stencil<std::vector<float>>("troupe", device, program, input, check));
      rows.variants.push_back(troupe_stencil<troupe::host_buffer<float>>("troupe-pinned", device,
                                                                         program, input, check));
      if (under_test.native) {
        stencil_problem problem{input, check};
        for (device_variant& variant : under_test.native->stencil(problem))
          rows.variants.push_back(std::move(variant));
      }
      if (cuda) {
        rows.ratios = {{"troupe", "native-cuda-sync"}, {"troupe-pinned", "native-cuda-async"}};
      } else {
        rows.ratios = {{"troupe", "native-opencl"}, {"troupe-pinned", "native-opencl-pinned"}};
      }
      bench.compare(rows);
    }
  }
}

}  // namespace troupe::bench
