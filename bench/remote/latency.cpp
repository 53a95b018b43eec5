// launch_latency, finish_latency, enqueue_cost and launch_read_cost: what one small call costs.
// Through troupe's ICD a blocking call is a round trip to the server, while a non-blocking
// enqueue, a read included, is sent without waiting for an answer (pipelined); enqueue_cost and
// launch_read_cost against finish_latency show that.
#include <cstdio>
#include <memory>
#include <vector>

#include "remote/kernels.hpp"
#include "remote/remote_bench.hpp"

namespace troupe::bench::remote {
namespace {

// One side's tick kernel and the counter it increments.
struct ticker {
  endpoint& side;
  opencl::kernel tick;
  opencl::memory counter;

  explicit ticker(endpoint& on)
      : side(on), tick(on.kernel(kernels::common, "tick")), counter(on.allocate(sizeof(cl_int))) {
    cl_mem memory = counter.get();
    set_arguments(tick.get(), memory);
  }

  void reset() const {
    const cl_int zero = 0;
    opencl::check(clEnqueueWriteBuffer(side.queue(), counter.get(), CL_TRUE, 0, sizeof zero, &zero,
                                       0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
  }

  void launch() const {
    const std::size_t one = 1;
    opencl::check(clEnqueueNDRangeKernel(side.queue(), tick.get(), 1, nullptr, &one, &one, 0,
                                         nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
  }

  void finish() const { opencl::check(clFinish(side.queue()), "clFinish"); }

  // A non-blocking read of the counter into `into`.
  void read_into(cl_int& into) const {
    opencl::check(clEnqueueReadBuffer(side.queue(), counter.get(), CL_FALSE, 0, sizeof into, &into,
                                      0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
  }

  // Empty when the counter reads `launches`.
  std::string counted(int launches) const {
    cl_int value = -1;
    opencl::check(clEnqueueReadBuffer(side.queue(), counter.get(), CL_TRUE, 0, sizeof value, &value,
                                      0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
    if (value == launches) return {};
    return "the counter reads " + std::to_string(value) + ", expected " + std::to_string(launches);
  }
};

enum class measure {
  launch_finish,  // clEnqueueNDRangeKernel + clFinish, `calls` times
  enqueue_only,   // clEnqueueNDRangeKernel alone, `calls` times; clFinish untimed, in the check
  launch_read,    // clEnqueueNDRangeKernel + a non-blocking read of the counter, `calls` times
  finish_only,    // clFinish on an empty queue, `calls` times
};

device_variant variant(endpoint& side, measure what, int calls) {
  return guarded(side.variant(), [&] {
    auto state = std::make_shared<ticker>(side);
    device_variant made;
    switch (what) {
      case measure::launch_finish:
        made.prepare = [state] { state->reset(); };
        made.run = [state, calls] {
          for (int call = 0; call < calls; ++call) {
            state->launch();
            state->finish();
          }
        };
        made.check = [state, calls] { return state->counted(calls); };
        break;
      case measure::enqueue_only:
        made.prepare = [state] {
          state->reset();
          state->finish();
        };
        made.run = [state, calls] {
          for (int call = 0; call < calls; ++call) state->launch();
        };
        made.check = [state, calls] {
          state->finish();
          return state->counted(calls);
        };
        break;
      case measure::launch_read: {
        // Read i must see the counter after launch i: the in-order queue, the reads' bytes.
        auto seen = std::make_shared<std::vector<cl_int>>(calls);
        made.prepare = [state, seen] {
          state->reset();
          state->finish();
          std::fill(seen->begin(), seen->end(), -1);
        };
        made.run = [state, seen, calls] {
          for (int call = 0; call < calls; ++call) {
            state->launch();
            state->read_into((*seen)[call]);
          }
        };
        made.check = [state, seen, calls]() -> std::string {
          state->finish();
          for (int call = 0; call < calls; ++call) {
            if ((*seen)[call] != call + 1) {
              return "read " + std::to_string(call) + " saw " + std::to_string((*seen)[call]) +
                     ", expected " + std::to_string(call + 1);
            }
          }
          return {};
        };
        break;
      }
      case measure::finish_only:
        // Every clFinish is checked for CL_SUCCESS (a failure throws); nothing else to check.
        made.prepare = [state] { state->finish(); };
        made.run = [state, calls] {
          for (int call = 0; call < calls; ++call) state->finish();
        };
        break;
    }
    return made;
  });
}

std::vector<measurement> compare(device_bench& bench, setup& under_test, const char* benchmark,
                                 const char* count_name, measure what) {
  const int calls = under_test.sizes.calls;
  comparison rows{.benchmark = benchmark,
                  .parameters = std::string(count_name) + "=" + std::to_string(calls),
                  .device = under_test.label,
                  .operations = static_cast<double>(calls)};
  rows.variants.push_back(variant(under_test.troupe, what, calls));
  rows.variants.push_back(variant(under_test.native, what, calls));
  rows.ratios.emplace_back("troupe", "native");
  return bench.compare(rows);
}

double median_or_zero(const std::vector<measurement>& measured, std::size_t index) {
  return index < measured.size() && measured[index].usable() ? measured[index].median() : 0.0;
}

}  // namespace

void run_latency(device_bench& bench, setup& under_test) {
  if (bench.selected("launch_latency")) {
    std::printf(
        "launch_latency: clEnqueueNDRangeKernel of a one-work-item kernel (it adds 1 to a "
        "counter, so that every launch is checked) + clFinish, per launch\n");
    compare(bench, under_test, "launch_latency", "launches", measure::launch_finish);
  }
  // enqueue_cost, launch_read_cost and finish_latency go together: the summary compares them.
  std::vector<measurement> enqueues, launch_reads, finishes;
  if (bench.selected("enqueue_cost")) {
    std::printf(
        "enqueue_cost: host time of one non-blocking clEnqueueNDRangeKernel (the same kernel), "
        "per call, no clFinish in the timed part\n");
    enqueues = compare(bench, under_test, "enqueue_cost", "enqueues", measure::enqueue_only);
  }
  if (bench.selected("launch_read_cost")) {
    std::printf(
        "launch_read_cost: host time of one non-blocking clEnqueueNDRangeKernel and one "
        "non-blocking clEnqueueReadBuffer of the 4-byte counter, per pair, no clFinish in the "
        "timed part (each read is checked to see its own launch)\n");
    launch_reads = compare(bench, under_test, "launch_read_cost", "pairs", measure::launch_read);
  }
  if (bench.selected("finish_latency")) {
    std::printf("finish_latency: clFinish on an empty queue (a blocking round trip), per call\n");
    finishes = compare(bench, under_test, "finish_latency", "calls", measure::finish_only);
  }
  if (finishes.empty() || (enqueues.empty() && launch_reads.empty())) return;
  std::printf("non-blocking enqueues against a blocking round trip (medians per call):\n");
  for (std::size_t index = 0; index < 2; ++index) {
    const double finish = median_or_zero(finishes, index);
    if (finish <= 0) continue;
    for (auto [measured, what] : {std::pair{&enqueues, "launch"}, {&launch_reads, "launch+read"}}) {
      const double enqueue = median_or_zero(*measured, index);
      if (enqueue <= 0) continue;
      std::printf("  %-7s %-12s %9.3g us   clFinish (empty queue) %9.3g us   ratio %.3g\n",
                  finishes[index].variant.c_str(), what, enqueue * 1e6, finish * 1e6,
                  enqueue / finish);
    }
  }
  std::printf("\n");
}

}  // namespace troupe::bench::remote
