#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>

#include "device_fixture.hpp"
#include "troupe/async/promise.hpp"

namespace troupe::test {
namespace {

using launch_test = device_test;

template <class Future>
error expect_error(Future&& f, errc code, const std::string& contains = {}) {
  try {
    std::forward<Future>(f).get();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string{e.what()}.find(contains), std::string::npos)
        << "'" << contains << "' is not in: " << e.what();
    return e;
  }
  ADD_FAILURE() << "no error";
  return error{errc::none, ""};
}

// The HPXCL paper's listing: three buffers, compile, launch, read back.
TEST_P(launch_test, adds_two_vectors_like_a_cpu) {
  const unsigned n = 10007;
  std::vector<float> a(n), b(n), expected(n);
  for (unsigned i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = 3.0f - static_cast<float>(i);
    expected[i] = a[i] + b[i];
  }
  auto prog = dev.compile(test_kernels().for_device(dev));
  auto da = dev.allocate<float>(n);
  auto db = dev.allocate<float>(n);
  auto dc = dev.allocate<float>(n);
  auto wa = da.write(a);
  auto wb = db.write(b);
  auto p = prog.get();
  auto k = dev.launch(p, "add", nd_range{{n}}, after(wa, wb), da, db, dc, n);
  EXPECT_EQ(dc.read(after(k)).get(), expected);
}

TEST_P(launch_test, scalars_of_several_types_arrive) {
  std::vector<float> x(256, 2.0f);
  auto buf = dev.allocate<float>(x.size());
  buf.write(x).get();
  auto p = compile_test_kernels();
  dev.launch(p, "scale_add", nd_range{{256}, {64}}, buf, 1.5f, -7, 256u).get();
  EXPECT_EQ(buf.read().get(), std::vector<float>(256, 2.0f * 1.5f - 7.0f));
}

// 20 arguments: more than a launch keeps on the stack. Each scalar is weighed by its position,
// so a lost or swapped argument changes the sum.
TEST_P(launch_test, a_launch_with_twenty_arguments_passes_each_in_its_place) {
  auto p = compile_test_kernels();
  auto out = dev.allocate<int>(1);
  dev.launch(p, "weigh_many", nd_range{{1}}, out, 3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8, 9, -7, 9,
             3, -2, 3, 8)
      .get();
  const std::vector<int> values{3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8, 9, -7, 9, 3, -2, 3, 8};
  int expected = 0;
  for (std::size_t k = 0; k < values.size(); ++k) expected += static_cast<int>(k + 1) * values[k];
  EXPECT_EQ(out.read().get(), std::vector<int>{expected});
}

TEST_P(launch_test, types_spelt_long_in_the_kernel_match_like_short_ones) {
  auto p = compile_test_kernels();
  auto out = dev.allocate<std::uint32_t>(8);
  dev.launch(p, "count_up", nd_range{{8}}, out, 40u).get();
  EXPECT_EQ(out.read().get(), (std::vector<std::uint32_t>{40, 41, 42, 43, 44, 45, 46, 47}));
  if (dev.backend() == backend::opencl) {  // CUDA reports sizes, not types
    expect_error(dev.launch(p, "count_up", nd_range{{8}}, out, 1.0f), errc::invalid_argument,
                 "argument 1 must be a uint");
    auto floats = dev.allocate<float>(8);
    expect_error(dev.launch(p, "count_up", nd_range{{8}}, floats, 40u), errc::invalid_argument,
                 "argument 0 must be a __global uint*");
  }
}

TEST_P(launch_test, cuda_grids_work_on_every_backend) {
  std::vector<int> zeros(512, 0);
  auto buf = dev.allocate<int>(512);
  buf.write(zeros).get();
  auto p = compile_test_kernels();
  dev.launch(p, "increment", cuda_grid{{4, 1, 1}, {128, 1, 1}}, buf, 512u).get();
  EXPECT_EQ(buf.read().get(), std::vector<int>(512, 1));
}

TEST_P(launch_test, kernels_without_parameters_build_and_run) {
  // NVIDIA's OpenCL compiler rejects -cl-kernel-arg-info for these; the build must still work.
  auto source = dev.backend() == backend::cuda ? R"(extern "C" __global__ void nothing() {}
                         extern "C" __global__ void one(int* x) { x[0] = 1; })"
                                               : R"(__kernel void nothing() {}
                         __kernel void one(__global int* x) { x[0] = 1; })";
  auto p = dev.compile(source).get();
  auto x = dev.allocate<int>(1);
  auto first = dev.launch(p, "nothing", nd_range{{1}});
  auto second = dev.launch(p, "one", nd_range{{1}}, after(first), x);
  EXPECT_EQ(x.read(after(second)).get(), std::vector<int>{1});
  expect_error(dev.launch(p, "one", nd_range{{1}}), errc::invalid_argument,
               "takes 1 arguments, the launch passed 0");
}

TEST_P(launch_test, compile_errors_carry_the_build_log) {
  auto broken = dev.backend() == backend::cuda
                    ? "extern \"C\" __global__ void k(int* x) { x[0] = undeclared_name; }"
                    : "__kernel void k(__global int* x) { x[0] = undeclared_name; }";
  auto e = expect_error(dev.compile(broken), errc::compile_error, "undeclared_name");
  EXPECT_NE(std::string{e.what()}.find(dev.name()), std::string::npos) << e.what();
}

TEST_P(launch_test, programs_are_cached_in_memory) {
  auto first = dev.compile(test_kernels().for_device(dev)).get();
  auto second = dev.compile(test_kernels().for_device(dev)).get();
  EXPECT_EQ(first.state(), second.state());
  auto other_options = dev.compile(test_kernels().for_device(dev), "-DUNUSED=1").get();
  EXPECT_NE(first.state(), other_options.state());
}

TEST_P(launch_test, a_second_system_loads_the_program_from_the_disk_cache) {
  auto dir = std::filesystem::temp_directory_path() /
             ("troupe-kernel-cache-test-" + std::to_string(::getpid()) + "-" +
              std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" + GetParam());
  std::filesystem::remove_all(dir);
  auto index = std::stoul(GetParam().substr(0, GetParam().find('_')));
  auto run = [&] {
    auto cfg = device_config();
    cfg.kernel_cache = dir.string();
    actor_system other{cfg};
    auto d = other.devices()[index];
    auto p = d.compile(test_kernels().for_device(d)).get();
    std::vector<int> zeros(100, 0);
    auto buf = d.allocate<int>(100);
    buf.write(zeros).get();
    d.launch(p, "increment", nd_range{{100}}, buf, 100u).get();
    EXPECT_EQ(buf.read().get(), std::vector<int>(100, 1));
    return p.from_cache();
  };
  EXPECT_FALSE(run());
  EXPECT_TRUE(run());
  std::filesystem::remove_all(dir);
}

TEST_P(launch_test, wrong_arguments_fail_with_a_message_naming_them) {
  auto p = compile_test_kernels();
  auto buf = dev.allocate<float>(16);
  auto ints = dev.allocate<int>(16);
  expect_error(dev.launch(p, "add", nd_range{{16}}, buf, buf, 16u), errc::invalid_argument,
               "takes 4 arguments, the launch passed 3");
  expect_error(dev.launch(p, "scale_add", nd_range{{16}}, buf, 1.5, 1, 16u), errc::invalid_argument,
               "argument 1");
  expect_error(dev.launch(p, "add", nd_range{{16}}, buf, buf, 1.0f, 16u), errc::invalid_argument,
               "argument 2");
  if (dev.backend() == backend::opencl)  // CUDA cannot tell an int* from a float*
    expect_error(dev.launch(p, "add", nd_range{{16}}, buf, ints, buf, 16u), errc::invalid_argument,
                 "buffer<int>");
  expect_error(dev.launch(p, "no_such_kernel", nd_range{{16}}, buf), errc::invalid_argument,
               "no kernel 'no_such_kernel'");
  expect_error(dev.launch(p, "increment", nd_range{{16, 2}, {4}}, ints, 16u),
               errc::invalid_argument, "local size");
  expect_error(dev.launch(program{}, "increment", nd_range{{16}}, ints, 16u), errc::no_state,
               "program handle is empty");
}

TEST_P(launch_test, device_side_dependencies_chain_without_host_waits) {
  const unsigned n = 4096;
  std::vector<int> zeros(n, 0);
  auto p = compile_test_kernels();
  auto buf = dev.allocate<int>(n);
  auto q1 = dev.make_queue();
  auto q2 = dev.make_queue();
  auto w = q1.write(buf, std::span<const int>{zeros});
  auto k1 = q2.launch(p, "increment", nd_range{{n}}, after(w), buf, n);
  auto k2 = q1.launch(p, "increment", nd_range{{n}}, after(k1), buf, n);
  auto k3 = q2.launch(p, "increment", nd_range{{n}}, after(k2), buf, n);
  EXPECT_EQ(q1.read(buf, after(k3)).get(), std::vector<int>(n, 3));
}

TEST_P(launch_test, ending_with_names_the_queue_of_a_running_last_command) {
  auto p = compile_test_kernels();
  auto flag = dev.allocate<int>(1);
  auto q = dev.make_queue();
  auto done = q.fill(flag, 0).share();
  done.get();
  EXPECT_FALSE(device_queue::ending_with(done).valid()) << "a finished command";
  EXPECT_FALSE(device_queue::ending_with(shared_future<void>{}).valid()) << "no state";
  promise<void> host;
  auto from_host = host.get_future().share();
  EXPECT_FALSE(device_queue::ending_with(from_host).valid()) << "no device command";
  // Not issued yet, since it waits for the host: work submitted to its queue runs after it all
  // the same.
  auto gated = q.fill(flag, 1, after(from_host)).share();
  auto behind_gate = device_queue::ending_with(gated);
  ASSERT_TRUE(behind_gate.valid()) << "a command waiting for the host";
  EXPECT_EQ(behind_gate.state(), q.state());
  auto read_behind = behind_gate.read(flag);
  host.set_value();
  EXPECT_EQ(read_behind.get(), std::vector<int>{1});
  gated.get();

  auto slow = q.launch(p, "spin_then_set", nd_range{{1}}, flag, 5, 1u << 22).share();
  auto found = device_queue::ending_with(slow);
  if (found.valid()) {
    EXPECT_EQ(found.state(), q.state());
    EXPECT_EQ(found.device(), dev);
    // Work enqueued there runs after it without a wait of its own.
    EXPECT_EQ(found.read(flag).get(), std::vector<int>{5});
  } else {
    EXPECT_TRUE(slow.is_ready()) << "a running last command must name its queue";
  }
  auto slow_again = q.launch(p, "spin_then_set", nd_range{{1}}, flag, 6, 1u << 22).share();
  auto next = q.fill(flag, 7, after(slow_again)).share();
  EXPECT_FALSE(device_queue::ending_with(slow_again).valid()) << "not the last command any more";
  next.get();
  EXPECT_EQ(flag.read().get(), std::vector<int>{7});
}

TEST_P(launch_test, order_after_waits_for_a_command_without_taking_its_error) {
  auto failed_with = [](auto&& f) -> std::string {
    try {
      f.get();
    } catch (const error& e) {
      return e.what();
    }
    return "no error";
  };
  auto flag = dev.allocate<int>(1);
  auto q1 = dev.make_queue();
  auto q2 = dev.make_queue();
  promise<void> gate;
  auto failing = q1.fill(flag, 1, after(gate.get_future())).share();
  dependencies ordered;
  ordered.order_after(failing);
  auto next = q2.fill(flag, 2, ordered).share();
  auto taken = q2.fill(flag, 3, after(failing));
  EXPECT_FALSE(next.is_ready()) << "it must wait for the command it is ordered after";
  gate.set_exception(std::make_exception_ptr(error{errc::runtime_error, "the gate failed"}));
  EXPECT_NO_THROW(next.get());
  EXPECT_EQ(failed_with(taken), "the gate failed") << "after() takes the error";
  EXPECT_EQ(failed_with(failing), "the gate failed");
  // Ordered after a command that has failed already: it runs at once.
  dependencies after_failure;
  after_failure.order_after(failing);
  q2.fill(flag, 4, after_failure).get();
  EXPECT_EQ(flag.read().get(), std::vector<int>{4});
  // An empty future is refused as after() refuses it.
  dependencies empty;
  empty.order_after(shared_future<void>{});
  EXPECT_NE(failed_with(q2.fill(flag, 5, empty)).find("without a state"), std::string::npos);
  auto p = compile_test_kernels();
  EXPECT_NE(failed_with(q2.launch(p, "increment", nd_range{{1}}, empty, flag, 1u))
                .find("launch of kernel 'increment': after() got a future without a state"),
            std::string::npos);
}

TEST_P(launch_test, every_dependency_is_awaited_not_just_the_first) {
  const unsigned n = 1 << 16;
  auto p = compile_test_kernels();
  std::vector<int> ones(n, 1), twos(n, 2), threes(n, 3);
  auto a = dev.allocate<int>(n);
  auto b = dev.allocate<int>(n);
  auto c = dev.allocate<int>(n);
  auto out = dev.allocate<int>(n);
  auto qa = dev.make_queue();
  auto qb = dev.make_queue();
  auto qc = dev.make_queue();
  // The last input is written last, after a host-side delay: a launch that waited only for
  // its first dependency would read garbage from c.
  promise<void> later;
  auto wa = qa.write(a, std::span<const int>{ones});
  auto wb = qb.write(b, std::span<const int>{twos});
  auto wc = qc.write(c, std::span<const int>{threes}, after(later.get_future()));
  auto k = dev.launch(p, "sum3", nd_range{{n}}, after(wa, wb, wc), a, b, c, out, n);
  std::thread setter{[&] {
    // Time passes on purpose: the launch is issued meanwhile, and must not start.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    later.set_value();
  }};
  EXPECT_EQ(out.read(after(k)).get(), std::vector<int>(n, 6));
  setter.join();
}

TEST_P(launch_test, host_dependencies_keep_the_queue_in_order) {
  auto q = dev.make_queue();
  auto buf = dev.allocate<int>(64);
  promise<void> gate;
  auto first = q.fill(buf, 1, after(gate.get_future()));
  auto second = q.fill(buf, 2);  // submitted later: must run later, though it waits for nothing
  auto result = q.read(buf);
  // Time passes on purpose: a queue that let the later commands overtake would end them now.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(result.is_ready());
  gate.set_value();
  EXPECT_EQ(result.get(), std::vector<int>(64, 2));
  first.get();
  second.get();
}

TEST_P(launch_test, a_failed_dependency_fails_the_command_with_its_error) {
  auto buf = dev.allocate<int>(8);
  auto failed = make_exceptional_future<void>(error(errc::runtime_error, "upstream broke"));
  expect_error(buf.fill(1, after(failed)), errc::runtime_error, "upstream broke");
  promise<void> later;
  auto pending = buf.fill(1, after(later.get_future()));
  later.set_exception(std::make_exception_ptr(error(errc::runtime_error, "late failure")));
  expect_error(std::move(pending), errc::runtime_error, "late failure");
  future<void> consumed;
  expect_error(buf.fill(1, after(consumed)), errc::no_state, "after()");
}

// A dependency submitted earlier to the same queue is not waited for, since the queue runs in
// order; one that has not reached the device yet may still fail there, and that failure must
// reach the commands that depend on it, and only them.
TEST_P(launch_test, a_command_behind_a_failed_one_on_its_queue_fails_with_its_error) {
  const unsigned n = 16;
  auto p = compile_test_kernels();
  auto q = dev.make_queue();
  auto buf = dev.allocate<int>(n);
  buf.fill(0).get();
  promise<void> gate;
  auto gated = q.fill(buf, 1, after(gate.get_future())).share();
  auto dependent = q.launch(p, "increment", nd_range{{n}}, after(gated), buf, n);
  dependencies ordered;
  ordered.order_after(gated);
  auto ordered_only = q.fill(buf, 3, ordered);
  auto independent = q.fill(buf, 5);
  gate.set_exception(std::make_exception_ptr(error(errc::runtime_error, "gate broke")));
  expect_error(std::move(dependent), errc::runtime_error, "gate broke");
  expect_error(gated, errc::runtime_error, "gate broke");
  EXPECT_NO_THROW(ordered_only.get()) << "order_after() does not take the error";
  independent.get();
  EXPECT_EQ(q.read(buf).get(), std::vector<int>(n, 5));
}

// Launches that nobody waits for yet may be issued by the completion thread when it polls
// (queue_state::hand_on: on OpenCL all of them, on CUDA those that come while a cover is due):
// from several threads at once, each thread's launches still run in its order, and none is lost.
TEST_P(launch_test, launches_from_several_threads_keep_each_threads_order) {
  const int threads = 4;
  const int rounds = 60;
  auto p = compile_test_kernels();
  auto q = dev.make_queue();
  auto counts = dev.allocate<int>(1);
  counts.fill(0).get();
  std::vector<std::thread> senders;
  std::vector<std::vector<int>> seen(threads);
  for (int t = 0; t < threads; ++t) {
    senders.emplace_back([&, t] {
      auto flag = dev.allocate<int>(1);
      for (int round = 1; round <= rounds; ++round) {
        q.launch(p, "spin_then_set", nd_range{{1}}, flag, round, 64u);
        q.launch(p, "increment", nd_range{{1}}, counts, 1u);
      }
      seen[static_cast<std::size_t>(t)] = q.read(flag).get();
    });
  }
  for (auto& sender : senders) sender.join();
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(seen[static_cast<std::size_t>(t)], std::vector<int>{rounds}) << "thread " << t;
  EXPECT_EQ(q.read(counts).get(), std::vector<int>{threads * rounds});
}

TEST_P(launch_test, concurrent_launches_of_one_program_do_not_mix_arguments) {
  auto p = compile_test_kernels();
  constexpr int threads = 8;
  constexpr unsigned n = 1024;
  std::vector<std::thread> launchers;
  std::vector<std::vector<float>> results(threads);
  for (int t = 0; t < threads; ++t) {
    launchers.emplace_back([&, t] {
      auto q = dev.make_queue();
      auto buf = dev.allocate<float>(n);
      std::vector<float> ones(n, 1.0f);
      auto w = q.write(buf, std::span<const float>{ones});
      future<void> last = std::move(w);
      for (int round = 0; round < 20; ++round)
        last = q.launch(p, "scale_add", nd_range{{n}}, after(last), buf, 1.0f, t, n);
      results[t] = q.read(buf, after(last)).get();
    });
  }
  for (auto& l : launchers) l.join();
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(results[t], std::vector<float>(n, 1.0f + 20.0f * static_cast<float>(t))) << t;
}

TEST_P(launch_test, queues_run_independently) {
  // A long kernel on one queue does not hold up a copy on another.
  auto p = compile_test_kernels();
  auto slow_queue = dev.make_queue();
  auto fast_queue = dev.make_queue();
  auto flag = dev.allocate<int>(1);
  auto data = dev.allocate<int>(1024);
  auto slow = slow_queue.launch(p, "spin_then_set", nd_range{{1}}, flag, 5, 1u << 22);
  std::vector<int> values(1024, 9);
  auto fast = fast_queue.write(data, std::span<const int>{values});
  fast.get();
  EXPECT_EQ(fast_queue.read(data).get(), values);
  slow.get();
  EXPECT_EQ(flag.read().get(), std::vector<int>{5});
}

// A launch that nobody waits for yet is issued without an event of its own (queue_state); these
// check that its future still ends, whoever waits for it and however late.

/// What each of these starts from: the test kernels, a queue of its own and `n` ints set to
/// `value`.
struct fresh_queue {
  program p;
  device_queue q;
  buffer<int> buf;
};
fresh_queue fresh_queue_with(const device& dev, program p, unsigned n, int value) {
  auto q = dev.make_queue();
  auto buf = dev.allocate<int>(n);
  q.fill(buf, value).get();
  return {std::move(p), std::move(q), std::move(buf)};
}

/// Whether `ready()` holds within 30 s, asked every millisecond: a poll, never a wait on a
/// future, which would give the launches a marker itself.
template <class Ready>
bool becomes_true_when_polled(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!ready() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return ready();
}

TEST_P(launch_test, a_launch_nobody_waits_for_ends_on_its_own) {
  const unsigned n = 256;
  auto [p, q, buf] = fresh_queue_with(dev, compile_test_kernels(), n, 0);
  auto launched = q.launch(p, "increment", nd_range{{n}}, buf, n);
  // Only polled, never waited for: it must become ready all the same.
  ASSERT_TRUE(becomes_true_when_polled([&] { return launched.is_ready(); }));
  launched.get();
  EXPECT_EQ(buf.read().get(), std::vector<int>(n, 1));
}

TEST_P(launch_test, launches_on_a_queue_that_keeps_issuing_end_without_a_wait) {
  // Issued closer together than the completion thread's cover delay, so that it finds the
  // queue busy and looks again later; more than a queue leaves without an event at a time, so
  // that the queue's own launches cover some. Only polled, never waited for.
  const unsigned n = 128;
  const int rounds = 80;
  auto [p, q, buf] = fresh_queue_with(dev, compile_test_kernels(), n, 0);
  std::vector<shared_future<void>> launches;
  for (int round = 0; round < rounds; ++round) {
    launches.push_back(q.launch(p, "increment", nd_range{{n}}, buf, n).share());
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  ASSERT_TRUE(becomes_true_when_polled([&] {
    return std::all_of(launches.begin(), launches.end(), [](auto& f) { return f.is_ready(); });
  }));
  for (auto& launched : launches) EXPECT_NO_THROW(launched.get());
  EXPECT_EQ(buf.read().get(), std::vector<int>(n, rounds));
}

TEST_P(launch_test, a_long_run_of_launches_ends_whichever_one_is_waited_for) {
  const unsigned n = 512;
  const int rounds = 100;  // more than a queue leaves without an event at a time
  auto [p, q, buf] = fresh_queue_with(dev, compile_test_kernels(), n, 0);
  std::vector<shared_future<void>> launches;
  for (int round = 0; round < rounds; ++round)
    launches.push_back(q.launch(p, "increment", nd_range{{n}}, buf, n).share());
  launches[rounds / 2].get();  // one in the middle first
  launches.back().get();
  for (auto& launched : launches) EXPECT_NO_THROW(launched.get());
  EXPECT_EQ(buf.read().get(), std::vector<int>(n, rounds));
}

TEST_P(launch_test, a_launch_waited_for_before_during_or_after_its_issue_ends) {
  // Each wait comes a little later after its launch, so that it finds the launch not issued
  // yet, in the driver, or enqueued without an event: each must end all the same.
  const unsigned n = 64;
  const int rounds = 200;
  auto [p, q, buf] = fresh_queue_with(dev, compile_test_kernels(), n, 0);
  for (int round = 0; round < rounds; ++round) {
    auto launched = q.launch(p, "increment", nd_range{{n}}, buf, n);
    const auto wait_from = std::chrono::steady_clock::now() + std::chrono::microseconds(round % 50);
    while (std::chrono::steady_clock::now() < wait_from) {
    }
    ASSERT_EQ(launched.wait_for(std::chrono::seconds(30)), std::future_status::ready)
        << "round " << round;
    EXPECT_NO_THROW(launched.get());
  }
  EXPECT_EQ(buf.read().get(), std::vector<int>(n, rounds));
}

TEST_P(launch_test, a_continuation_on_a_launch_runs_without_a_blocking_wait) {
  const unsigned n = 64;
  auto [p, q, buf] = fresh_queue_with(dev, compile_test_kernels(), n, 41);
  // Nobody waits, neither here nor in the continuations: the read is chained, and the result
  // is only polled for.
  std::atomic<bool> on_a_worker{false};
  std::atomic<int> first{0};
  auto* workers = &sys.default_executor();
  auto answer = q.launch(p, "increment", nd_range{{n}}, buf, n)
                    .then([buf](future<void> launched) mutable {
                      launched.get();  // ready: rethrows a failed launch
                      return buf.read();
                    })
                    .then([&, workers](std::vector<int> values) {
                      on_a_worker = troupe::detail::this_thread_executor() == workers;
                      first = values.front();
                    });
  ASSERT_TRUE(becomes_true_when_polled([&] { return answer.is_ready(); }));
  answer.get();
  EXPECT_EQ(first.load(), 42);
  EXPECT_TRUE(on_a_worker.load()) << "the continuation ran outside the scheduler's workers";
}

TEST_P(launch_test, launches_nobody_waited_for_have_ended_once_the_system_is_gone) {
  const auto index = std::stoul(GetParam().substr(0, GetParam().find('_')));
  shared_future<void> first, last;
  {
    actor_system local{device_config()};
    auto d = local.devices()[index];
    auto p = d.compile(test_kernels().for_device(d)).get();
    auto q = d.make_queue();
    auto flag = d.allocate<int>(1);
    first = q.launch(p, "spin_then_set", nd_range{{1}}, flag, 1, 1u << 20).share();
    last = q.launch(p, "spin_then_set", nd_range{{1}}, flag, 2, 1u << 20).share();
  }
  ASSERT_TRUE(first.is_ready());
  ASSERT_TRUE(last.is_ready());
  EXPECT_NO_THROW(first.get());
  EXPECT_NO_THROW(last.get());
}

TEST_P(launch_test, a_launch_after_the_system_is_gone_fails_with_system_gone) {
  const auto index = std::stoul(GetParam().substr(0, GetParam().find('_')));
  device kept;
  program p;
  buffer<int> buf;
  {
    actor_system local{device_config()};
    kept = local.devices()[index];
    p = kept.compile(test_kernels().for_device(kept)).get();
    buf = kept.allocate<int>(1);  // the device's default queue is not made yet
  }
  try {
    kept.launch(p, "increment", nd_range{{1}}, buf, 1).get();
    ADD_FAILURE() << "a launch after the system is gone did not fail";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::system_gone) << e.what();
    EXPECT_NE(std::string{e.what()}.find("gone"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(devices, launch_test, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(launch_test);

}  // namespace
}  // namespace troupe::test
