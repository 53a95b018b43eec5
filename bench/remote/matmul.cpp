// matmul: one whole N x N single-precision matrix multiply request (write A and B, the tiled
// kernel, read C back), as a client of a remote device would send it. split: the rows of the same
// request divided between the device reached directly and the device behind the server, both
// working at once; the native baseline does every row locally.
//
// The inputs are multiples of 1/8 in [-1, 1], so every product is a multiple of 1/64 and every
// sum of up to 2^18 of them is exact in single precision: the checks compare exactly.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "remote/kernels.hpp"
#include "remote/remote_bench.hpp"

namespace troupe::bench::remote {
namespace {

// The kernel's work-group edge (TILE in kernels.hpp): sizes and row counts are multiples of it.
constexpr std::size_t tile = 16;

float a_value(std::size_t row, std::size_t column) {
  return static_cast<float>(static_cast<int>((row * 7 + column * 3) % 17) - 8) / 8.0f;
}
float b_value(std::size_t row, std::size_t column) {
  return static_cast<float>(static_cast<int>((row * 5 + column * 11) % 13) - 6) / 8.0f;
}

// The inputs, and the entries of C that each run is checked on with their exact values: all of
// them up to N = 512, beyond that three per row (every row, spread over the columns) and the
// whole first and last rows.
struct problem {
  std::size_t n = 0;
  std::vector<float> a, b;
  std::vector<std::pair<std::size_t, float>> expected;  // (row * n + column, value)

  explicit problem(std::size_t size) : n(size), a(size * size), b(size * size) {
    for (std::size_t row = 0; row < n; ++row) {
      for (std::size_t column = 0; column < n; ++column) {
        a[row * n + column] = a_value(row, column);
        b[row * n + column] = b_value(row, column);
      }
    }
    auto entry = [this](std::size_t row, std::size_t column) {
      double sum = 0;  // exact, as on the device
      for (std::size_t k = 0; k < n; ++k) sum += double{a[row * n + k]} * double{b[k * n + column]};
      expected.emplace_back(row * n + column, static_cast<float>(sum));
    };
    if (n <= 512) {
      for (std::size_t row = 0; row < n; ++row)
        for (std::size_t column = 0; column < n; ++column) entry(row, column);
      return;
    }
    for (std::size_t column = 0; column < n; ++column) {
      entry(0, column);
      entry(n - 1, column);
    }
    for (std::size_t row = 1; row + 1 < n; ++row)
      for (std::size_t spread : {std::size_t{0}, n / 3, 2 * n / 3})
        entry(row, (row * 131 + spread) % n);
  }

  std::string check(const std::vector<float>& c) const {
    std::size_t wrong = 0;
    std::string first;
    for (const auto& [index, value] : expected) {
      if (c[index] == value) continue;  // NaN, which C is cleared to, fails
      if (wrong++ == 0)
        first = "C[" + std::to_string(index / n) + "][" + std::to_string(index % n) + "] is " +
                std::to_string(c[index]) + ", expected " + std::to_string(value);
    }
    if (wrong == 0) return {};
    return first + " (" + std::to_string(wrong) + " of " + std::to_string(expected.size()) +
           " checked entries differ)";
  }
};

// Rows [first, first + rows) of the product on one device: its own A rows, all of B, C rows.
class part {
 public:
  part(endpoint& side, std::size_t n, std::size_t first, std::size_t rows)
      : side_(side),
        n_(n),
        first_(first),
        rows_(rows),
        kernel_(side.kernel(kernels::common, "matmul")),
        a_(side.allocate(rows * n * sizeof(float))),
        b_(side.allocate(n * n * sizeof(float))),
        c_(side.allocate(rows * n * sizeof(float))) {}

  // Clears C on the device, so that a run whose kernel did not run fails its check.
  void clear() const {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    opencl::check(clEnqueueFillBuffer(side_.queue(), c_.get(), &nan, sizeof nan, 0,
                                      rows_ * n_ * sizeof(float), 0, nullptr, nullptr),
                  "clEnqueueFillBuffer");
    opencl::check(clFinish(side_.queue()), "clFinish");
  }

  // Enqueues the part's request: A rows and B non-blocking, the kernel, C rows into `c`,
  // blocking or not.
  void enqueue(const problem& inputs, std::vector<float>& c, bool blocking_read) const {
    cl_command_queue queue = side_.queue();
    opencl::check(clEnqueueWriteBuffer(queue, a_.get(), CL_FALSE, 0, rows_ * n_ * sizeof(float),
                                       inputs.a.data() + first_ * n_, 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
    opencl::check(clEnqueueWriteBuffer(queue, b_.get(), CL_FALSE, 0, n_ * n_ * sizeof(float),
                                       inputs.b.data(), 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
    const auto width = static_cast<cl_int>(n_);
    set_arguments(kernel_.get(), width, a_.get(), b_.get(), c_.get());
    const std::size_t global[2] = {n_, rows_};
    const std::size_t local[2] = {tile, tile};
    opencl::check(clEnqueueNDRangeKernel(queue, kernel_.get(), 2, nullptr, global, local, 0,
                                         nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
    // Non-blocking, the read of a remote part is pipelined too: its bytes land at clFinish.
    opencl::check(clEnqueueReadBuffer(queue, c_.get(), blocking_read ? CL_TRUE : CL_FALSE, 0,
                                      rows_ * n_ * sizeof(float), c.data() + first_ * n_, 0,
                                      nullptr, nullptr),
                  "clEnqueueReadBuffer");
  }

  cl_command_queue queue() const { return side_.queue(); }

 private:
  endpoint& side_;
  std::size_t n_, first_, rows_;
  opencl::kernel kernel_;
  opencl::memory a_, b_, c_;
};

// A request on one part ends with a blocking read. Spread over parts, each part is enqueued
// with a non-blocking read (and flushed, but for the last), then every queue is finished: the
// parts compute at once.
struct request {
  std::shared_ptr<const problem> inputs;
  std::vector<float> c;
  std::vector<std::unique_ptr<part>> parts;

  void prepare() {
    std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
    for (const auto& each : parts) each->clear();
  }
  void run() {
    if (parts.size() == 1) {
      parts.front()->enqueue(*inputs, c, true);
      return;
    }
    for (std::size_t index = 0; index < parts.size(); ++index) {
      parts[index]->enqueue(*inputs, c, false);
      if (index + 1 < parts.size()) opencl::check(clFlush(parts[index]->queue()), "clFlush");
    }
    for (const auto& each : parts) opencl::check(clFinish(each->queue()), "clFinish");
  }
  std::string check() const { return inputs->check(c); }
};

// A variant named `name` doing `inputs` with `local_rows` rows on `local` and the rest on
// `remote`.
device_variant variant(const std::string& name, const std::shared_ptr<const problem>& inputs,
                       endpoint& local, endpoint& remote, std::size_t local_rows) {
  return guarded(name, [&] {
    auto job = std::make_shared<request>();
    job->inputs = inputs;
    job->c.resize(inputs->n * inputs->n);
    const std::size_t n = inputs->n;
    if (local_rows > 0) job->parts.push_back(std::make_unique<part>(local, n, 0, local_rows));
    if (local_rows < n)
      job->parts.push_back(std::make_unique<part>(remote, n, local_rows, n - local_rows));
    device_variant made;
    made.prepare = [job] { job->prepare(); };
    made.run = [job] { job->run(); };
    made.check = [job] { return job->check(); };
    return made;
  });
}

comparison rows_for(const setup& under_test, const char* benchmark, std::string parameters,
                    std::size_t n) {
  const double flops = 2.0 * std::pow(static_cast<double>(n), 3);
  return comparison{.benchmark = benchmark,
                    .parameters = std::move(parameters),
                    .device = under_test.label,
                    .metric = "GFLOP/s",
                    .units_per_run = flops / 1e9};
}

bool usable_size(device_bench& bench, const setup& under_test, const char* benchmark,
                 std::size_t n) {
  if (n == 0 || n % tile != 0) {
    bench.skip(benchmark, under_test.label.name,
               "N=" + std::to_string(n) + " is not a multiple of " + std::to_string(tile));
    return false;
  }
  if (n * n * sizeof(float) > under_test.max_allocation) {
    bench.skip(benchmark, under_test.label.name,
               "N=" + std::to_string(n) + " is over the device's largest allocation");
    return false;
  }
  return true;
}

}  // namespace

void run_matmul(device_bench& bench, setup& under_test) {
  if (!bench.selected("matmul")) return;
  std::printf(
      "matmul: N x N floats, one request: non-blocking writes of A and B, a %zux%zu-tiled kernel, "
      "the read of C; GFLOP/s = 2 N^3 / time of the whole request\n",
      tile, tile);
  for (std::size_t n : under_test.sizes.matmul_sizes) {
    if (!usable_size(bench, under_test, "matmul", n)) continue;
    auto inputs = std::make_shared<const problem>(n);
    comparison rows = rows_for(under_test, "matmul", "N=" + std::to_string(n), n);
    // One part each, all rows on the side's own device.
    rows.variants.push_back(variant("troupe", inputs, under_test.troupe, under_test.troupe, 0));
    rows.variants.push_back(variant("native", inputs, under_test.native, under_test.native, n));
    rows.ratios.emplace_back("troupe", "native");
    bench.compare(rows);
  }
}

void run_split(device_bench& bench, setup& under_test) {
  if (!bench.selected("split")) return;
  const std::size_t n = under_test.sizes.split_size;
  if (!usable_size(bench, under_test, "split", n)) return;
  std::printf(
      "split: the matmul request of N=%zu, its rows divided between the device reached directly "
      "and the device behind the server (remote_share of them, in multiples of %zu rows), both "
      "at work at once; native does every row locally\n",
      n, tile);
  auto inputs = std::make_shared<const problem>(n);
  for (double share : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const std::size_t remote_rows =
        static_cast<std::size_t>(std::lround(share * static_cast<double>(n / tile))) * tile;
    char share_text[16];
    std::snprintf(share_text, sizeof share_text, "%g", share);
    comparison rows = rows_for(under_test, "split",
                               "N=" + std::to_string(n) + ";remote_share=" + share_text +
                                   ";remote_rows=" + std::to_string(remote_rows),
                               n);
    rows.variants.push_back(
        variant("troupe-split", inputs, under_test.native, under_test.troupe, n - remote_rows));
    rows.variants.push_back(variant("native", inputs, under_test.native, under_test.native, n));
    rows.ratios.emplace_back("troupe-split", "native");
    bench.compare(rows);
  }
}

}  // namespace troupe::bench::remote
