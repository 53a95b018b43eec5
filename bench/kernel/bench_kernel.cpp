// bench-kernel: the evaluation of the CAF OpenCL actors paper, troupe's kernel actors side by
// side with raw OpenCL and the raw CUDA driver API in one process, on every device present
// (BENCHMARKS.md):
//   matmul_request   one N x N multiply request against the same raw calls
//   matmul_iterated  multiplies one after the other: the actor sends the next on the response,
//                    the native side starts it from the completion of the one before
//   empty_stage      pipelines of 1 and 20 stages of an empty kernel on device memory, against
//                    the same launches enqueued directly (in OpenCL also each one flushed)
//   spawn            N kernel actors against N ordinary actors
//   mandelbrot       an image split between a kernel actor and CPU actors, at fixed shares and
//                    automatically
//   wah_build        a WAH bitmap index built by a pipeline of kernel actors, against the host
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "kernel/kernel_bench.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::bench::kernel_bench {

std::unique_ptr<native_side> open_opencl_side(std::size_t ordinal, std::string& why);
#ifdef TROUPE_BENCH_HAS_CUDA
std::unique_ptr<native_side> open_cuda_side(int ordinal, std::string& why);
#endif

namespace {

using namespace troupe::kernel;
namespace stage_trace = troupe::detail::stage_trace;

constexpr std::string_view suite = "kernel";

struct target {
  troupe::device device;
  std::unique_ptr<native_side> native;
  std::string native_missing;
  device_label label() const {
    return {std::string(troupe::to_string(device.backend())), device.name()};
  }
  bool gpu() const { return device.info().type == troupe::device_type::gpu; }
};

std::vector<target> find_targets(troupe::actor_system& system, bool gpus_only,
                                 const std::string& only_backend) {
  std::vector<target> targets;
  std::size_t opencl_ordinal = 0;
  [[maybe_unused]] std::size_t cuda_ordinal = 0;
  for (const auto& dev : system.devices()) {
    target found{dev, nullptr, {}};
    if (dev.backend() == troupe::backend::opencl) {
      found.native = open_opencl_side(opencl_ordinal++, found.native_missing);
    } else {
#ifdef TROUPE_BENCH_HAS_CUDA
      found.native = open_cuda_side(static_cast<int>(cuda_ordinal++), found.native_missing);
#else
      found.native_missing = "built without CUDA's headers";
#endif
    }
    if (gpus_only && !found.gpu()) continue;
    if (!only_backend.empty() && to_string(dev.backend()) != only_backend) continue;
    targets.push_back(std::move(found));
  }
  std::cout << "devices:\n";
  for (const auto& each : targets) {
    std::cout << "  " << each.label().backend << ": " << each.device.name()
              << ", native side: " << (each.native ? "yes" : "none, " + each.native_missing)
              << "\n";
  }
  std::cout << std::endl;
  return targets;
}

/// The nd_range of an N x N multiply: on CUDA whole 16 x 16 blocks covering N x N (the native
/// side's grid; the kernel checks its bounds), on OpenCL N x N with the driver's work-groups.
nd_range multiply_range(const troupe::device& dev, std::size_t n) {
  if (dev.backend() == troupe::backend::cuda) {
    const std::size_t covered = (n + 15) / 16 * 16;
    return nd_range{{covered, covered}, {16, 16}};
  }
  return nd_range{{n, n}};
}

/// A kernel actor multiplying two n x n matrices, received as `In` says and answered as `Out`
/// says (val: vectors; ref: mem_refs; pinned: host_buffers).
template <class In, class Out>
actor spawn_multiply(actor_system& system, const troupe::device& dev, std::size_t n) {
  return system.spawn_kernel(matmul_source, "m_mult", multiply_range(dev, n), on(dev),
                             in<float, In>{}, in<float, In>{}, out<float, Out>{n * n},
                             priv<unsigned>{static_cast<unsigned>(n)});
}

/// `values` copied into pinned memory of `dev`.
host_buffer<float> pinned_copy(const troupe::device& dev, const std::vector<float>& values) {
  auto copy = dev.allocate_host<float>(values.size());
  std::copy(values.begin(), values.end(), copy.begin());
  return copy;
}

void run_matmul_request(device_bench& bench, actor_system& system,
                        const std::vector<target>& targets, const std::vector<std::size_t>& only) {
  if (!bench.selected("matmul_request")) return;
  for (const auto& under_test : targets) {
    std::vector<std::size_t> sizes = under_test.gpu()
                                         ? std::vector<std::size_t>{1000, 2000, 4000, 8000, 12000}
                                         : std::vector<std::size_t>{250, 500, 1000};
    if (!only.empty()) sizes = only;
    if (bench.quick()) sizes = {64, 128};
    for (std::size_t n : sizes) {
      auto a = std::make_shared<const std::vector<float>>(matrix(n, 5));
      auto b = std::make_shared<const std::vector<float>>(matrix(n, 3));
      comparison rows{.benchmark = "matmul_request",
                      .parameters = "N=" + std::to_string(n),
                      .device = under_test.label(),
                      .metric = "GFLOP/s",
                      .units_per_run = 2e-9 * std::pow(static_cast<double>(n), 3)};
      rows.variants.push_back(guarded("troupe", [&] {
        struct state {
          actor multiply;
          std::vector<float> a, b, c;
        };
        auto run = std::make_shared<state>(
            state{spawn_multiply<val, val>(system, under_test.device, n), {}, {}, {}});
        device_variant variant;
        // The inputs are copied into fresh vectors before each run, untimed, and moved into the
        // request: the native side reads them from where they are. The last result is freed
        // here too: the native side reads into the same array each time.
        variant.prepare = [run, a, b] {
          run->a = *a;
          run->b = *b;
          run->c = std::vector<float>{};
        };
        variant.run = [run] {
          stage_trace::record(stage_trace::point::run_begin);  // stage_trace.py --stages 0
          run->c = request<std::vector<float>>(run->multiply, std::move(run->a), std::move(run->b))
                       .get();
          stage_trace::record(stage_trace::point::waiter_done);
        };
        variant.check = [run, a, b, n] {
          if (run->c.size() != n * n) return std::string{"wrong result size"};
          return check_product(*a, *b, run->c.data(), n);
        };
        return variant;
      }));
      rows.variants.push_back(guarded("troupe-pinned", [&] {
        // a and b stay in pinned memory, as the tuned native side keeps them, and c comes back
        // in a pinned block of the actor's: every copy is a DMA.
        struct state {
          actor multiply;
          host_buffer<float> a, b, c;
        };
        const auto& dev = under_test.device;
        auto run = std::make_shared<state>(state{spawn_multiply<pinned, pinned>(system, dev, n),
                                                 pinned_copy(dev, *a),
                                                 pinned_copy(dev, *b),
                                                 {}});
        device_variant variant;
        // The last product is spoilt and released, untimed: the actor takes its block again, and
        // a request that wrote nothing fails the check.
        variant.prepare = [run] {
          std::fill(run->c.begin(), run->c.end(), -1.0f);
          run->c = {};
        };
        variant.run = [run] {
          run->c = request<host_buffer<float>>(run->multiply, run->a, run->b).get();
        };
        variant.check = [run, a, b, n] {
          if (run->c.size() != n * n) return std::string{"wrong result size"};
          return check_product(*a, *b, run->c.data(), n);
        };
        return variant;
      }));
      if (under_test.native) {
        rows.variants.push_back(under_test.native->matmul_request_tuned(a, b, n));
        rows.ratios.emplace_back("troupe-pinned", rows.variants.back().name);
        rows.ratios.emplace_back("troupe", rows.variants.back().name);
        rows.variants.push_back(under_test.native->matmul_request(a, b, n));
        rows.ratios.emplace_back("troupe", rows.variants.back().name);
      }
      bench.compare(rows);
    }
  }
}

/// `values` on `dev`, ready once written, for kernels that only read them.
mem_ref<float> mem_ref_of(const troupe::device& dev, const std::vector<float>& values) {
  auto memory = dev.allocate<float>(values.size());
  auto written = memory.write(std::span<const float>{values}).share();
  return mem_ref<float>{memory, values.size(), written, access::read_only};
}

/// An actor that, asked for `count` multiplies, sends `multiply` (a, b) each time the product
/// of the one before (a `Product`) has arrived, and answers with the last one in a vector.
template <class Product>
actor spawn_multiply_driver(actor_system& system, const actor& multiply, const mem_ref<float>& a,
                            const mem_ref<float>& b) {
  return system.spawn([multiply, a, b](event_based_actor* self) {
    return behavior{[=](int count) {
      auto promise = self->make_response_promise();
      auto left = std::make_shared<int>(count);
      auto step = std::make_shared<std::function<void()>>();
      *step = [=] {
        self->request(multiply, a, b)
            .then(
                [=](const Product& c) mutable {
                  if (--*left > 0) {
                    (*step)();
                  } else {
                    std::vector<float> last(c.begin(), c.end());  // copied once, at the end
                    *step = nullptr;                              // ends the step's hold on itself
                    promise.deliver(std::move(last));
                  }
                },
                [=](troupe::error& e) mutable {
                  *step = nullptr;
                  promise.deliver(e);
                });
      };
      (*step)();
      return promise;
    }};
  });
}

/// troupe's side of `iterations` multiplies in a row: a and b stay on the device (mem_refs), and
/// a driver actor sends the next request when the product of the one before, sent on as `Out`
/// says, has arrived. The last product is copied out, as the tuned native side copies it.
template <class Out, class Product>
device_variant iterated_multiplies(actor_system& system, const troupe::device& dev,
                                   std::shared_ptr<const std::vector<float>> a,
                                   std::shared_ptr<const std::vector<float>> b, std::size_t n,
                                   int iterations) {
  auto driver = spawn_multiply_driver<Product>(system, spawn_multiply<ref, Out>(system, dev, n),
                                               mem_ref_of(dev, *a), mem_ref_of(dev, *b));
  auto result = std::make_shared<std::vector<float>>();
  device_variant variant;
  variant.prepare = [result] { *result = std::vector<float>{}; };  // freed untimed
  variant.run = [driver, result, iterations] {
    stage_trace::record(stage_trace::point::run_begin);  // stage_trace.py --stages 0
    *result = request<std::vector<float>>(driver, iterations).get();
    stage_trace::record(stage_trace::point::waiter_done);
  };
  variant.check = [result, a, b, n] {
    if (result->size() != n * n) return std::string{"wrong result size"};
    return check_product(*a, *b, result->data(), n);
  };
  return variant;
}

/// `iterations` multiplies of two n x n matrices in a row, each sent when the one before ends.
void run_iterations(device_bench& bench, actor_system& system, const target& under_test,
                    std::size_t n, int iterations) {
  auto a = std::make_shared<const std::vector<float>>(matrix(n, 5));
  auto b = std::make_shared<const std::vector<float>>(matrix(n, 3));
  comparison rows{
      .benchmark = "matmul_iterated",
      .parameters = "N=" + std::to_string(n) + ";iterations=" + std::to_string(iterations),
      .device = under_test.label(),
      .operations = static_cast<double>(iterations)};
  // troupe: each product read back into a vector; troupe-pinned: into a pinned block of the
  // actor's, taken again once the driver has dropped the one before.
  rows.variants.push_back(guarded("troupe", [&] {
    return iterated_multiplies<val, std::vector<float>>(system, under_test.device, a, b, n,
                                                        iterations);
  }));
  rows.variants.push_back(guarded("troupe-pinned", [&] {
    return iterated_multiplies<pinned, host_buffer<float>>(system, under_test.device, a, b, n,
                                                           iterations);
  }));
  if (under_test.native) {
    rows.variants.push_back(under_test.native->matmul_iterated_tuned(a, b, n, iterations));
    rows.ratios.emplace_back("troupe-pinned", rows.variants.back().name);
    rows.ratios.emplace_back("troupe", rows.variants.back().name);
    rows.variants.push_back(under_test.native->matmul_iterated(a, b, n, iterations));
    rows.ratios.emplace_back("troupe", rows.variants.back().name);
  }
  bench.compare(rows);
}

void run_matmul_iterated(device_bench& bench, actor_system& system,
                         const std::vector<target>& targets, const std::vector<int>& counts) {
  if (!bench.selected("matmul_iterated")) return;
  for (const auto& under_test : targets) {
    const std::size_t n = bench.quick() ? 64 : under_test.gpu() ? 1000 : 128;
    const int default_count = bench.quick() ? 10 : under_test.gpu() ? 1000 : 100;
    for (int iterations : counts.empty() ? std::vector<int>{default_count} : counts) {
      run_iterations(bench, system, under_test, n, iterations);
    }
  }
}

void run_empty_stage(device_bench& bench, actor_system& system,
                     const std::vector<target>& targets) {
  if (!bench.selected("empty_stage")) return;
  const std::size_t count = 1024;
  for (const auto& under_test : targets) {
    for (int stages : {1, 20}) {
      comparison rows{
          .benchmark = "empty_stage",
          .parameters = "stages=" + std::to_string(stages) + ";elements=" + std::to_string(count),
          .device = under_test.label(),
          .operations = static_cast<double>(stages)};
      rows.variants.push_back(guarded("troupe", [&] {
        const auto& dev = under_test.device;
        actor pipeline;
        for (int stage = 0; stage < stages; ++stage) {
          auto next = system.spawn_kernel(empty_source, "empty", nd_range{{count}}, on(dev),
                                          in_out<float, ref, ref>{});
          pipeline = pipeline ? next * pipeline : next;
        }
        auto memory = dev.allocate<float>(count);
        mem_ref<float> data{memory, count, memory.fill(0.0f).share()};
        data.ready().get();
        auto warm = system.spawn_kernel(empty_source, "empty", nd_range{{count}}, on(dev),
                                        in_out<float, ref, ref>{});
        device_variant variant;
        // Untimed: one launch on troupe's context, as the native side does on its own (see
        // native_side::empty_stages).
        variant.prepare = [warm, data] { request<mem_ref<float>>(warm, data).get().ready().get(); };
        // Done when the last stage's kernel has run (its mem_ref is ready).
        variant.run = [pipeline, data, stages] {
          stage_trace::record(stage_trace::point::run_begin, static_cast<unsigned>(stages));
          request<mem_ref<float>>(pipeline, data).get().ready().get();
          stage_trace::record(stage_trace::point::waiter_done);
        };
        variant.check = [] { return std::string{}; };  // a failed stage throws in run
        return variant;
      }));
      if (under_test.native) {
        rows.variants.push_back(under_test.native->empty_stages(count, stages));
        rows.ratios.emplace_back("troupe", rows.variants.back().name);
        if (auto flushed = under_test.native->flushed_empty_stages(count, stages)) {
          rows.variants.push_back(std::move(*flushed));
          rows.ratios.emplace_back("troupe", rows.variants.back().name);
        }
      }
      bench.compare(rows);
    }
  }
}

void run_spawn(device_bench& bench, actor_system& system, const std::vector<target>& targets) {
  if (!bench.selected("spawn") || targets.empty()) return;
  const auto& dev = targets.front().device;
  std::vector<std::size_t> counts = bench.quick() ? std::vector<std::size_t>{1000}
                                    : targets.front().gpu()
                                        ? std::vector<std::size_t>{100000, 1000000}
                                        : std::vector<std::size_t>{100000};
  for (std::size_t count : counts) {
    comparison rows{.benchmark = "spawn",
                    .parameters = "actors=" + std::to_string(count),
                    .device = targets.front().label(),
                    .operations = static_cast<double>(count)};
    auto kernel_actors = std::make_shared<std::vector<actor>>();
    auto plain_actors = std::make_shared<std::vector<actor>>();
    device_variant kernels;
    kernels.name = "troupe-kernel";
    kernels.prepare = [kernel_actors, count] {
      kernel_actors->clear();
      kernel_actors->reserve(count);
    };
    kernels.run = [&system, dev, kernel_actors, count] {
      for (std::size_t i = 0; i < count; ++i) {
        kernel_actors->push_back(system.spawn_kernel(empty_source, "empty", nd_range{{1}}, on(dev),
                                                     in_out<float, ref, ref>{}));
      }
    };
    kernels.check = [kernel_actors, count] {
      return kernel_actors->size() == count ? std::string{} : std::string{"actors missing"};
    };
    device_variant plain;
    plain.name = "troupe-actor";
    plain.prepare = [plain_actors, count] {
      plain_actors->clear();
      plain_actors->reserve(count);
    };
    plain.run = [&system, plain_actors, count] {
      for (std::size_t i = 0; i < count; ++i) {
        plain_actors->push_back(system.spawn([](int x) { return x; }));
      }
    };
    plain.check = [plain_actors, count] {
      return plain_actors->size() == count ? std::string{} : std::string{"actors missing"};
    };
    rows.variants = {kernels, plain};
    rows.ratios.emplace_back("troupe-kernel", "troupe-actor");
    bench.compare(rows);
    kernel_actors->clear();
    plain_actors->clear();
  }
}

/// This suite's own options; the harness's (options) are parsed from what is left.
struct suite_options {
  bool gpus_only = false;
  std::vector<std::string> mandelbrot_images;  // WxHxI; empty: the paper's four
  std::vector<std::size_t> matmul_sizes;       // N; empty: the paper's five
  std::vector<int> iteration_counts;           // empty: 1000 on a GPU
  std::vector<std::size_t> wah_rows;           // column sizes; empty: 10k to 20M
  std::string only_backend;                    // "opencl" or "cuda"; empty: both
  std::string trace_file;                      // where --trace writes; empty: no trace
  split_selection mandelbrot_splits = parse_split_selection("");  // all, unless --shares
};

/// Takes this suite's options out of `arguments`, leaving the others for parse_options. Throws
/// usage_error at the first bad one.
suite_options take_suite_options(std::vector<std::string>& arguments) {
  suite_options chosen;
  using troupe::bench::detail::parse_count;
  // This suite's options that take a value; the others go on to parse_options.
  const std::map<std::string, std::function<void(const std::string&)>> with_value{
      {"--backend",
       [&](const std::string& v) {
         if (v != "opencl" && v != "cuda")
           throw usage_error("--backend: expected 'opencl' or 'cuda', found '" + v + "'");
         chosen.only_backend = v;
       }},
      {"--matmul",
       [&](const std::string& v) {
         chosen.matmul_sizes.push_back(static_cast<std::size_t>(parse_count("--matmul", v, 1)));
       }},
      {"--iterations",
       [&](const std::string& v) {
         chosen.iteration_counts.push_back(parse_count("--iterations", v, 1));
       }},
      {"--wah",
       [&](const std::string& v) {
         chosen.wah_rows.push_back(static_cast<std::size_t>(parse_count("--wah", v, 1)));
       }},
      {"--mandelbrot",
       [&](const std::string& v) {
         check_mandelbrot_image(v);
         chosen.mandelbrot_images.push_back(v);
       }},
      {"--shares",
       [&](const std::string& v) { chosen.mandelbrot_splits = parse_split_selection(v); }},
      {"--trace",
       [&](const std::string& v) {
         if (!stage_trace::enabled)
           throw usage_error(
               "--trace: this build records no stage trace; configure it with "
               "-DTROUPE_STAGE_TRACE=ON");
         chosen.trace_file = v;
       }},
  };
  for (std::size_t i = 0; i < arguments.size();) {
    const auto at = arguments.begin() + static_cast<std::ptrdiff_t>(i);
    if (*at == "--gpus-only") {
      chosen.gpus_only = true;
      arguments.erase(at);
      continue;
    }
    const auto option = with_value.find(*at);
    if (option == with_value.end()) {
      ++i;
      continue;
    }
    if (i + 1 == arguments.size())
      throw usage_error(*at + ": expected a value after it, found none");
    option->second(arguments[i + 1]);
    arguments.erase(at, at + 2);
  }
  return chosen;
}

/// --help: the harness's options, then this suite's.
void print_help() {
  std::cout << usage(suite) << "  --gpus-only    leave out CPU devices (PoCL)\n"
            << "  --backend B    only devices of backend B (opencl or cuda)\n"
            << "  --matmul N     only this matrix size for matmul_request; repeatable\n"
            << "  --iterations K only K multiplies in a row for matmul_iterated (default "
               "1000 on a GPU); repeatable\n"
            << "  --wah ROWS     only this column size for wah_build; repeatable\n"
            << "  --mandelbrot WxHxI  only this image (width x height x iterations); "
               "repeatable\n"
            << "  --shares LIST  only these Mandelbrot splits: offloaded percents (0, 10, "
               "..., 100) and 'auto', separated by commas\n"
            << "  --trace FILE   write the stage trace to FILE (a build with "
               "-DTROUPE_STAGE_TRACE=ON; see stage_trace.py)\n";
}

/// Runs every selected benchmark on every device chosen; returns the exit code.
int run_benchmarks(troupe::config& config, const options& settings, const suite_options& chosen) {
  config.threads = static_cast<std::size_t>(settings.threads);
  troupe::actor_system system{config};
  auto targets = find_targets(system, chosen.gpus_only, chosen.only_backend);
  if (targets.empty()) {
    throw std::runtime_error(
        std::string{"no device to measure"} +
        (chosen.gpus_only ? ": no GPU found" : ": no device found") +
        (chosen.only_backend.empty() ? "" : " of backend " + chosen.only_backend) +
        " (the list above is empty)");
  }
  device_bench bench{settings};
  std::cout << "bench-kernel: " << settings.threads << " threads, " << settings.warmup
            << " warm-up + " << settings.runs << " timed runs per variant"
            << (settings.quick ? " (quick)" : "") << ", CSV " << settings.csv.string() << "\n\n";
  run_matmul_request(bench, system, targets, chosen.matmul_sizes);
  run_matmul_iterated(bench, system, targets, chosen.iteration_counts);
  run_empty_stage(bench, system, targets);
  run_spawn(bench, system, targets);
  for (const auto& under_test : targets) {
    run_mandelbrot(bench, system, under_test.device, under_test.label(), under_test.gpu(),
                   chosen.mandelbrot_images, chosen.mandelbrot_splits);
    run_wah_build(bench, system, under_test.device, under_test.label(), under_test.gpu(),
                  chosen.wah_rows);
  }
  if (!chosen.trace_file.empty()) stage_trace::write(chosen.trace_file.c_str());
  return bench.finish();
}

}  // namespace
}  // namespace troupe::bench::kernel_bench

int main(int argc, char** argv) {
  using namespace troupe::bench;
  using namespace troupe::bench::kernel_bench;
  try {
    troupe::config config(argc, argv);
    std::vector<std::string> arguments = config.remaining_args;
    const suite_options chosen = take_suite_options(arguments);
    std::vector<char*> pointers;
    for (std::string& argument : arguments) pointers.push_back(argument.data());
    options settings = parse_options(suite, static_cast<int>(pointers.size()), pointers.data());
    if (settings.help) {
      print_help();
      return 0;
    }
    return run_benchmarks(config, settings, chosen);
  } catch (const usage_error& error) {
    std::cerr << "bench-kernel: " << error.what() << "\n\n" << usage(suite);
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "bench-kernel: " << error.what() << std::endl;
    return 1;
  }
}
