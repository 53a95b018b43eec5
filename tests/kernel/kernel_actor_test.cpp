// Kernel actors: values and mem_refs in and out, every in_out combination, local, private and
// scratch arguments, output sizes, and requests on one actor in order. Each result is checked
// against the same computation on the CPU.
#include <numeric>

#include "kernel_fixture.hpp"
#include "troupe/async/promise.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

std::vector<float> iota_floats(std::size_t n, float first) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), first);
  return values;
}

class kernel_actor : public kernel_test {};

TEST_P(kernel_actor, values_in_and_out_match_the_cpu) {
  const std::size_t n = 1000;
  auto add = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev), in<float>{},
                              in<float>{}, out<float>{});
  auto a = iota_floats(n, 1), b = iota_floats(n, -0.5f);
  auto c = request<std::vector<float>>(add, a, b).get();
  ASSERT_EQ(c.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(kernel_actor, a_mem_ref_stays_on_the_device_until_read) {
  const std::size_t n = 4096;
  auto scale = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev), in<float>{},
                                out<float, ref>{}, priv<float>{3.0f});
  auto x = iota_floats(n, 0);
  auto y = request<mem_ref<float>>(scale, x).get();
  EXPECT_EQ(y.size(), n);
  EXPECT_TRUE(y.device() == dev);
  EXPECT_EQ(y.rights(), access::read_write);
  auto back = y.read().get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], x[i] * 3.0f) << i;
  // A write-only view cannot be read back.
  auto failed = error_of(y.restricted(access::write_only).read());
  EXPECT_EQ(failed.code(), errc::invalid_argument);
  EXPECT_NE(std::string{failed.what()}.find("write-only"), std::string::npos) << failed.what();
}

TEST_P(kernel_actor, in_out_in_all_four_combinations) {
  const std::size_t n = 512;
  std::vector<int> start(n);
  std::iota(start.begin(), start.end(), 10);
  auto spawn = [&](auto tag, int by) {
    return sys.spawn_kernel(kernel_test_sources(), "increment", nd_range{{n}}, on(dev), tag,
                            priv<int>{by});
  };
  auto val_val = spawn(in_out<int, val, val>{}, 1);
  auto val_ref = spawn(in_out<int, val, ref>{}, 2);
  auto ref_val = spawn(in_out<int, ref, val>{}, 3);
  auto ref_ref = spawn(in_out<int, ref, ref>{}, 4);
  auto expect = [&](const std::vector<int>& got, int added) {
    ASSERT_EQ(got.size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], start[i] + added) << i;
  };
  expect(request<std::vector<int>>(val_val, start).get(), 1);
  auto on_device = request<mem_ref<int>>(val_ref, start).get();
  expect(on_device.read().get(), 2);
  // ref in: modified in place, and the same memory comes back.
  auto again = request<mem_ref<int>>(ref_ref, on_device).get();
  EXPECT_TRUE(again.memory().state() == on_device.memory().state());
  expect(again.read().get(), 6);
  expect(request<std::vector<int>>(ref_val, again).get(), 9);
}

TEST_P(kernel_actor, local_private_and_scratch_arguments) {
  if (cuda()) GTEST_SKIP() << "CUDA kernels declare their shared memory: no local<T> argument";
  const std::size_t n = 1024, group = 64;
  auto sums =
      sys.spawn_kernel(kernel_test_sources(), "block_sums", nd_range{{n}, {group}}, on(dev),
                       in<int>{}, out<int>{n / group}, local<int>{group}, scratch<int>{n + group});
  std::vector<int> in_values(n);
  std::iota(in_values.begin(), in_values.end(), -300);
  auto got = request<std::vector<int>>(sums, in_values).get();
  ASSERT_EQ(got.size(), n / group);
  for (std::size_t g = 0; g < n / group; ++g) {
    int expected = 0;
    for (std::size_t i = 0; i < group; ++i) expected += in_values[g * group + i] * 2;
    EXPECT_EQ(got[g], expected) << "group " << g;
  }
}

TEST_P(kernel_actor, output_sizes_from_a_constant_and_from_the_request) {
  const std::size_t n = 300;
  std::vector<int> values(n);
  std::iota(values.begin(), values.end(), 0);
  // Every third element: 100 work items; the output size is a function of the input's size.
  auto every_third = sys.spawn_kernel(
      kernel_test_sources(), "first_of_each", nd_range{{n / 3}}, on(dev), in<int>{},
      out<int>{[](const request_shape& shape) { return shape.sizes[0] / 3; }}, priv<unsigned>{3});
  auto got = request<std::vector<int>>(every_third, values).get();
  ASSERT_EQ(got.size(), n / 3);
  for (std::size_t i = 0; i < n / 3; ++i) EXPECT_EQ(got[i], values[i * 3]);
  // A constant larger than the work: the tail is whatever the device held, the head is right.
  auto padded = sys.spawn_kernel(kernel_test_sources(), "first_of_each", nd_range{{10}}, on(dev),
                                 in<int>{}, out<int>{16}, priv<unsigned>{1});
  auto got_padded = request<std::vector<int>>(padded, values).get();
  ASSERT_EQ(got_padded.size(), 16u);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(got_padded[i], values[i]);
}

TEST_P(kernel_actor, a_private_argument_from_the_message) {
  const std::size_t n = 256;
  auto scale = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev), in<float>{},
                                out<float>{}, priv<float, val>{});
  auto x = iota_floats(n, 1);
  for (float factor : {0.5f, 2.0f, -1.0f}) {
    auto y = request<std::vector<float>>(scale, x, factor).get();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * factor) << i;
  }
}

TEST_P(kernel_actor, requests_to_one_actor_run_in_order) {
  // Each request adds 1 in place to the same device memory: in order, request k sees k.
  const std::size_t n = 128;
  auto increment = sys.spawn_kernel(kernel_test_sources(), "increment", nd_range{{n}}, on(dev),
                                    in_out<int, ref, ref>{}, priv<int>{1});
  auto zero =
      request<mem_ref<int>>(sys.spawn_kernel(kernel_test_sources(), "increment", nd_range{{n}},
                                             on(dev), in_out<int, val, ref>{}, priv<int>{0}),
                            std::vector<int>(n, 0))
          .get();
  std::vector<future<mem_ref<int>>> pending;
  for (int k = 0; k < 50; ++k) pending.push_back(request<mem_ref<int>>(increment, zero));
  for (auto& f : pending) f.get();
  auto last = request<mem_ref<int>>(increment, zero).get().read().get();
  EXPECT_EQ(last, std::vector<int>(n, 51));
}

TEST_P(kernel_actor, a_failed_request_does_not_fail_the_next_one) {
  // Requests to one actor run in order; the error of one stays with it.
  const std::size_t n = 64;
  auto increment = sys.spawn_kernel(kernel_test_sources(), "increment", nd_range{{n}}, on(dev),
                                    in_out<int, ref, ref>{}, priv<int>{1});
  auto good_memory = dev.allocate<int>(n);
  const mem_ref<int> good{good_memory, n, good_memory.fill(0).share()};
  promise<void> gate;
  auto bad_memory = dev.allocate<int>(n);
  const mem_ref<int> bad{bad_memory, n, gate.get_future().share()};
  auto failed = request<mem_ref<int>>(increment, bad).get();  // a ref: answered at once
  auto next = request<mem_ref<int>>(increment, good).get();
  gate.set_exception(std::make_exception_ptr(error{errc::runtime_error, "no input"}));
  EXPECT_EQ(error_of(failed.read()).code(), errc::runtime_error);
  EXPECT_EQ(next.read().get(), std::vector<int>(n, 1));
  // And after the failure is known.
  EXPECT_EQ(request<mem_ref<int>>(increment, good).get().read().get(), std::vector<int>(n, 2));
}

TEST_P(kernel_actor, a_program_built_before) {
  auto prog = dev.compile(cuda() ? kernel_test_sources().cuda : kernel_test_sources().opencl).get();
  const std::size_t n = 64;
  auto add = sys.spawn_kernel(prog, "add", nd_range{{n}}, in<float>{}, in<float>{}, out<float>{});
  auto c = request<std::vector<float>>(add, iota_floats(n, 0), iota_floats(n, 0)).get();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 2.0f * static_cast<float>(i));
}

TEST_P(kernel_actor, a_cpp_fallback_where_no_device_can_run_it) {
  const std::size_t n = 100;
  auto add_on_host = [](std::vector<float> a, const std::vector<float>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
  };
  auto a = iota_floats(n, 1), b = iota_floats(n, 2);
  std::vector<float> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = a[i] + b[i];
  // No device named: the fallback does the work.
  auto nowhere =
      sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(std::vector<device>{}),
                       fallback(add_on_host), in<float>{}, in<float>{}, out<float>{});
  EXPECT_EQ(request<std::vector<float>>(nowhere, a, b).get(), expected);
  // A device without a variant for its backend: left out, and the fallback does the work.
  kernel::source other_backend_only = cuda() ? kernel::source{kernel_test_sources().opencl, "", ""}
                                             : kernel::source{"", kernel_test_sources().cuda, ""};
  auto no_variant = sys.spawn_kernel(other_backend_only, "add", nd_range{{n}}, on(dev),
                                     fallback(add_on_host), in<float>{}, in<float>{}, out<float>{});
  EXPECT_EQ(request<std::vector<float>>(no_variant, a, b).get(), expected);
  // With a device that can, the kernel runs (the fallback here would give something else).
  auto on_device =
      sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev),
                       fallback([](std::vector<float> x, const std::vector<float>&) { return x; }),
                       in<float>{}, in<float>{}, out<float>{});
  EXPECT_EQ(request<std::vector<float>>(on_device, a, b).get(), expected);
  // A fallback that throws answers with an error that says so.
  auto failing = sys.spawn_kernel(
      kernel_test_sources(), "add", nd_range{{n}}, on(std::vector<device>{}),
      fallback([](const std::vector<float>&, const std::vector<float>&) -> std::vector<float> {
        throw std::runtime_error("host out of ideas");
      }),
      in<float>{}, in<float>{}, out<float>{});
  auto e = error_of(request<std::vector<float>>(failing, a, b));
  EXPECT_NE(std::string{e.what()}.find("host out of ideas"), std::string::npos) << e.what();
  // Without a fallback, no device is an error at spawn.
  EXPECT_THROW(sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}},
                                on(std::vector<device>{}), in<float>{}, in<float>{}, out<float>{}),
               troupe::error);
}

INSTANTIATE_TEST_SUITE_P(devices, kernel_actor, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(kernel_actor);

}  // namespace
}  // namespace troupe::test
