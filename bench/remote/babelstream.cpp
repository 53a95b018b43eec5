// babelstream: BabelStream's five kernels (copy, mul, add, triad, dot) in double precision, its
// OpenCL code style (arguments set before every launch, a clFinish after each kernel; dot reads
// its work groups' sums back and adds them on the host), its byte counts for GB/s, and its check:
// a=0.1, b=0.2, c=0.0 at the start, scalar 0.4, the expected values tracked through every kernel
// run. Each kernel is one comparison, its runs timed one by one; every run's output array is
// checked whole, and BabelStream's own check of a, b, c and the sum runs at the end.
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "remote/kernels.hpp"
#include "remote/remote_bench.hpp"

namespace troupe::bench::remote {
namespace {

// BabelStream's start values.
constexpr double start_a = 0.1;
constexpr double start_b = 0.2;
constexpr double start_c = 0.0;
constexpr double start_scalar = 0.4;

enum class stream_kernel { copy, mul, add, triad, dot };

const char* name_of(stream_kernel which) {
  switch (which) {
    case stream_kernel::copy:
      return "copy";
    case stream_kernel::mul:
      return "mul";
    case stream_kernel::add:
      return "add";
    case stream_kernel::triad:
      return "triad";
    case stream_kernel::dot:
      return "dot";
  }
  return "?";
}

// Bytes BabelStream counts per kernel run: arrays read plus arrays written.
std::size_t bytes_moved(stream_kernel which, std::size_t elements) {
  const std::size_t arrays = which == stream_kernel::add || which == stream_kernel::triad ? 3 : 2;
  return arrays * elements * sizeof(double);
}

// BabelStream's dot launch: on CPUs one group per compute unit of twice the native double vector
// width, elsewhere four groups per compute unit of the largest work-group size.
struct dot_shape {
  std::size_t groups = 1;
  std::size_t group_size = 1;
};

dot_shape shape_for(cl_device_id id) {
  const auto units = device_info<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
  if (device_info<cl_device_type>(id, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) {
    return {units, std::size_t{2} * device_info<cl_uint>(id, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE)};
  }
  return {std::size_t{4} * units, device_info<std::size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE)};
}

// One side's arrays, kernels, and the values BabelStream expects in them.
struct stream_state {
  endpoint& side;
  std::size_t elements;
  dot_shape dot;
  opencl::memory a, b, c, sums;
  opencl::kernel copy, mul, add, triad, dot_kernel;
  double gold_a = start_a, gold_b = start_b, gold_c = start_c;
  double sum = 0, gold_sum = 0;
  // Host memory for the checks, shared by both sides.
  std::shared_ptr<std::vector<double>> host;
  std::vector<double> partial_sums;

  stream_state(endpoint& on, std::size_t count, dot_shape shape,
               std::shared_ptr<std::vector<double>> shared)
      : side(on),
        elements(count),
        dot(shape),
        a(on.allocate(count * sizeof(double))),
        b(on.allocate(count * sizeof(double))),
        c(on.allocate(count * sizeof(double))),
        sums(on.allocate(shape.groups * sizeof(double))),
        copy(on.kernel(kernels::babelstream, "copy")),
        mul(on.kernel(kernels::babelstream, "mul")),
        add(on.kernel(kernels::babelstream, "add")),
        triad(on.kernel(kernels::babelstream, "triad")),
        dot_kernel(on.kernel(kernels::babelstream, "stream_dot")),
        host(std::move(shared)),
        partial_sums(shape.groups) {
    opencl::kernel init = on.kernel(kernels::babelstream, "init");
    set_arguments(init.get(), a.get(), b.get(), c.get(), start_a, start_b, start_c);
    launch(init.get());
  }

  void launch(cl_kernel kernel) const {
    opencl::check(clEnqueueNDRangeKernel(side.queue(), kernel, 1, nullptr, &elements, nullptr, 0,
                                         nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
    opencl::check(clFinish(side.queue()), "clFinish");
  }

  // Kernel runs per timed run. On one GPU the two sides are two processes' contexts, and
  // switching between them after every kernel slows both: a timed run is a block of kernel runs,
  // reported per kernel (all five kernels give the same values when repeated).
  int repeats = 1;

  // A timed run: `repeats` kernel runs, each as BabelStream's OCLStream does it.
  void run(stream_kernel which) {
    for (int repeat = 0; repeat < repeats; ++repeat) run_once(which);
  }

  // One kernel run, as BabelStream's OCLStream does it; the expected values follow.
  void run_once(stream_kernel which) {
    switch (which) {
      case stream_kernel::copy:
        set_arguments(copy.get(), a.get(), c.get());
        launch(copy.get());
        gold_c = gold_a;
        break;
      case stream_kernel::mul:
        set_arguments(mul.get(), b.get(), c.get());
        launch(mul.get());
        gold_b = start_scalar * gold_c;
        break;
      case stream_kernel::add:
        set_arguments(add.get(), a.get(), b.get(), c.get());
        launch(add.get());
        gold_c = gold_a + gold_b;
        break;
      case stream_kernel::triad:
        set_arguments(triad.get(), a.get(), b.get(), c.get());
        launch(triad.get());
        gold_a = gold_b + start_scalar * gold_c;
        break;
      case stream_kernel::dot: {
        set_arguments(dot_kernel.get(), a.get(), b.get(), sums.get());
        opencl::check(clSetKernelArg(dot_kernel.get(), 3, dot.group_size * sizeof(double), nullptr),
                      "clSetKernelArg");
        const auto count = static_cast<cl_int>(elements);
        opencl::check(clSetKernelArg(dot_kernel.get(), 4, sizeof count, &count), "clSetKernelArg");
        const std::size_t global = dot.groups * dot.group_size;
        opencl::check(clEnqueueNDRangeKernel(side.queue(), dot_kernel.get(), 1, nullptr, &global,
                                             &dot.group_size, 0, nullptr, nullptr),
                      "clEnqueueNDRangeKernel");
        opencl::check(clEnqueueReadBuffer(side.queue(), sums.get(), CL_TRUE, 0,
                                          partial_sums.size() * sizeof(double), partial_sums.data(),
                                          0, nullptr, nullptr),
                      "clEnqueueReadBuffer");
        sum = 0;
        for (double partial : partial_sums) sum += partial;
        gold_sum = gold_a * gold_b * static_cast<double>(elements);
        break;
      }
    }
  }

  // BabelStream's test of one array: the mean relative error within 100 machine epsilons.
  std::string check_array(const opencl::memory& array, double gold, const char* name) const {
    opencl::check(clEnqueueReadBuffer(side.queue(), array.get(), CL_TRUE, 0,
                                      elements * sizeof(double), host->data(), 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
    double error = 0;
    for (std::size_t index = 0; index < elements; ++index)
      error += std::fabs((*host)[index] - gold);
    error /= static_cast<double>(elements);
    if (gold != 0) error /= std::fabs(gold);
    // Written so that NaN fails.
    if (error <= std::numeric_limits<double>::epsilon() * 100.0) return {};
    char text[160];
    std::snprintf(text, sizeof text,
                  "%s: mean relative error %.3g (element 0 is %.17g, expected %.17g)", name, error,
                  (*host)[0], gold);
    return text;
  }

  // BabelStream's test of the sum: relative error within 1e-8.
  std::string check_sum() const {
    const double error = std::fabs((sum - gold_sum) / gold_sum);
    if (error <= 1.0e-8) return {};
    char text[160];
    std::snprintf(text, sizeof text, "sum %.17g, expected %.17g (relative error %.3g)", sum,
                  gold_sum, error);
    return text;
  }

  // The check after a run of `which`: its output, whole.
  std::string check(stream_kernel which) const {
    switch (which) {
      case stream_kernel::copy:
      case stream_kernel::add:
        return check_array(c, gold_c, "c");
      case stream_kernel::mul:
        return check_array(b, gold_b, "b");
      case stream_kernel::triad:
        return check_array(a, gold_a, "a");
      case stream_kernel::dot:
        return check_sum();
    }
    return "unknown kernel";
  }
};

device_variant variant(const std::shared_ptr<stream_state>& state, stream_kernel which) {
  device_variant made;
  made.name = state->side.variant();
  made.run = [state, which] { state->run(which); };
  made.check = [state, which] { return state->check(which); };
  return made;
}

}  // namespace

bool run_babelstream(device_bench& bench, setup& under_test) {
  if (!bench.selected("babelstream")) return true;
  const std::size_t elements = under_test.sizes.stream_size;
  auto has_fp64 = [](cl_device_id id) {
    std::size_t size = 0;
    opencl::check(clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, nullptr, &size), "clGetDeviceInfo");
    std::string extensions(size, '\0');
    opencl::check(clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr),
                  "clGetDeviceInfo");
    return extensions.find("cl_khr_fp64") != std::string::npos;
  };
  if (!has_fp64(under_test.native.id()) || !has_fp64(under_test.troupe.id())) {
    bench.skip("babelstream", under_test.label.name, "the device has no double precision");
    return true;
  }
  if (elements * sizeof(double) > under_test.max_allocation) {
    bench.skip("babelstream", under_test.label.name,
               "an array of " + std::to_string(elements) +
                   " doubles is over the device's largest "
                   "allocation");
    return true;
  }
  const dot_shape dot = shape_for(under_test.native.id());
  const int repeats = bench.quick() ? 2 : 20;
  std::printf(
      "babelstream: %zu doubles per array (%.0f MiB)%s; dot: %zu groups of %zu; a timed run is "
      "%d kernel runs in a row, times are per kernel run\n",
      elements, static_cast<double>(elements * sizeof(double)) / (1 << 20),
      under_test.sizes.stream_note.c_str(), dot.groups, dot.group_size, repeats);

  auto host = std::make_shared<std::vector<double>>(elements);
  std::shared_ptr<stream_state> troupe_side, native_side;
  std::string troupe_error, native_error;
  try {
    troupe_side = std::make_shared<stream_state>(under_test.troupe, elements, dot, host);
  } catch (const std::exception& error) {
    troupe_error = error.what();
  }
  try {
    native_side = std::make_shared<stream_state>(under_test.native, elements, dot, host);
  } catch (const std::exception& error) {
    native_error = error.what();
  }
  auto side_variant = [](const std::shared_ptr<stream_state>& state, const std::string& error,
                         const std::string& name, stream_kernel which) {
    if (!state) {
      device_variant failed;
      failed.name = name;
      failed.setup_error = error;
      return failed;
    }
    return variant(state, which);
  };

  for (const auto& state : {troupe_side, native_side}) {
    if (state) state->repeats = repeats;
  }
  for (stream_kernel which : {stream_kernel::copy, stream_kernel::mul, stream_kernel::add,
                              stream_kernel::triad, stream_kernel::dot}) {
    comparison rows{
        .benchmark = "babelstream",
        .parameters = std::string("kernel=") + name_of(which) + ";n=" + std::to_string(elements),
        .device = under_test.label,
        .operations = static_cast<double>(repeats),
        .metric = "GB/s",
        .units_per_run =
            static_cast<double>(repeats) * static_cast<double>(bytes_moved(which, elements)) / 1e9};
    rows.variants.push_back(side_variant(troupe_side, troupe_error, "troupe", which));
    rows.variants.push_back(side_variant(native_side, native_error, "native", which));
    rows.ratios.emplace_back("troupe", "native");
    bench.compare(rows);
  }

  // BabelStream's check_solution, on each side's arrays as they are after every run.
  bool all_ok = true;
  std::printf("babelstream: BabelStream's check of a, b, c and the last sum:");
  for (const auto& state : {troupe_side, native_side}) {
    if (!state) continue;
    std::string wrong;
    try {
      for (std::string found :
           {state->check_array(state->a, state->gold_a, "a"),
            state->check_array(state->b, state->gold_b, "b"),
            state->check_array(state->c, state->gold_c, "c"), state->check_sum()}) {
        if (wrong.empty()) wrong = found;
      }
    } catch (const std::exception& error) {
      wrong = error.what();
    }
    std::printf(" %s %s", state->side.variant().c_str(), wrong.empty() ? "ok" : "FAILED");
    if (!wrong.empty()) std::printf(" (%s)", wrong.c_str());
    all_ok = all_ok && wrong.empty();
  }
  std::printf("\n\n");
  return all_ok;
}

}  // namespace troupe::bench::remote
