// Every way a kernel actor request can go wrong arrives as an error response that names the
// problem; the actor goes on serving good requests after each.
#include <numeric>

#include "kernel_fixture.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

class kernel_errors : public kernel_test {
 protected:
  static bool mentions(const troupe::error& e, const std::string& text) {
    return std::string{e.what()}.find(text) != std::string::npos;
  }
  actor adder(std::size_t n) {
    return sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{n}}, on(dev),
                            in<float>{size_rule{}}, in<float>{size_rule{}}, out<float>{});
  }
  void still_serves(const actor& add, std::size_t n) {
    auto c = request<std::vector<float>>(add, std::vector<float>(n, 1), std::vector<float>(n, 2));
    EXPECT_EQ(c.get(), std::vector<float>(n, 3));
  }
};

TEST_P(kernel_errors, a_message_of_the_wrong_type) {
  auto add = adder(8);
  auto e = error_of(request<std::vector<float>>(add, std::vector<int>(8, 1), std::vector<int>(8)));
  EXPECT_EQ(e.code(), errc::unexpected_message);
  EXPECT_TRUE(mentions(e, "actor 'kernel add'")) << e.what();
  EXPECT_TRUE(mentions(e, "int")) << e.what();
  still_serves(add, 8);
}

TEST_P(kernel_errors, an_input_of_the_wrong_size) {
  auto add = adder(8);
  auto e = error_of(
      request<std::vector<float>>(add, std::vector<float>(8, 1), std::vector<float>(7, 1)));
  EXPECT_EQ(e.code(), errc::invalid_argument);
  EXPECT_TRUE(mentions(e, "argument 1 (in<float, val>): it has 7 elements, expected 8"))
      << e.what();
  auto empty = error_of(
      request<std::vector<float>>(sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{8}},
                                                   on(dev), in<float>{}, in<float>{}, out<float>{}),
                                  std::vector<float>{}, std::vector<float>(8)));
  EXPECT_TRUE(mentions(empty, "argument 0 (in<float, val>): the vector is empty")) << empty.what();
  still_serves(add, 8);
}

TEST_P(kernel_errors, a_compile_error_comes_with_its_build_log) {
  kernel::source broken{"__kernel void add(__global float* a) { this is not C; }",
                        "extern \"C\" __global__ void add(float* a) { this is not C; }", ""};
  auto add = sys.spawn_kernel(broken, "add", nd_range{{8}}, on(dev), in_out<float>{});
  for (int attempt = 0; attempt < 2; ++attempt) {  // every request hears it
    auto e = error_of(request<std::vector<float>>(add, std::vector<float>(8, 1)));
    EXPECT_EQ(e.code(), errc::compile_error);
    EXPECT_TRUE(mentions(e, "this")) << "no build log in: " << e.what();
  }
}

TEST_P(kernel_errors, device_memory_runs_out) {
  auto huge = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{8}}, on(dev), in<float>{},
                               out<float>{std::size_t{1} << 42}, priv<float>{1});
  auto e = error_of(request<std::vector<float>>(huge, std::vector<float>(8, 1)));
  EXPECT_EQ(e.code(), errc::out_of_device_memory) << e.what();
  auto zero = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{8}}, on(dev), in<float>{},
                               out<float>{0}, priv<float>{1});
  auto none = error_of(request<std::vector<float>>(zero, std::vector<float>(8, 1)));
  EXPECT_TRUE(mentions(none, "argument 1 (out<float, val>): its size (0) is 0 elements"))
      << none.what();
}

TEST_P(kernel_errors, a_launch_that_fails) {
  // A kernel name the program lacks, and an argument of the wrong type.
  auto missing = sys.spawn_kernel(kernel_test_sources(), "no_such_kernel", nd_range{{8}}, on(dev),
                                  in_out<float>{});
  auto e = error_of(request<std::vector<float>>(missing, std::vector<float>(8, 1)));
  EXPECT_NE(e.code(), errc::none);
  EXPECT_TRUE(mentions(e, "no_such_kernel")) << e.what();
  if (!cuda()) {  // CUDA kernels carry no parameter types to check against
    auto wrong = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{8}}, on(dev),
                                  in<float>{}, out<float>{}, priv<double>{2.0});
    auto bad = error_of(request<std::vector<float>>(wrong, std::vector<float>(8, 1)));
    EXPECT_EQ(bad.code(), errc::invalid_argument) << bad.what();
    EXPECT_TRUE(mentions(bad, "double")) << bad.what();
  }
}

TEST_P(kernel_errors, mem_refs_with_too_few_rights) {
  const std::size_t n = 8;
  auto produce = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev),
                                  in<float>{}, out<float, ref>{}, priv<float>{1});
  auto increment = sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev),
                                    in<float, ref>{}, out<float>{}, priv<float>{1});
  auto data = request<mem_ref<float>>(produce, std::vector<float>(n, 5)).get();
  auto e = error_of(request<std::vector<float>>(increment, data.restricted(access::write_only)));
  EXPECT_TRUE(mentions(e, "argument 0 (in<float, ref>): the mem_ref is write-only")) << e.what();
  EXPECT_EQ(request<std::vector<float>>(increment, data.restricted(access::read_only)).get(),
            std::vector<float>(n, 5));
  EXPECT_TRUE(mentions(error_of(request<std::vector<float>>(increment, mem_ref<float>{})),
                       "the mem_ref is empty"));
}

TEST_P(kernel_errors, a_malformed_nd_range) {
  auto add = sys.spawn_kernel(kernel_test_sources(), "add", nd_range{{8}, {3, 3}}, on(dev),
                              in<float>{}, in<float>{}, out<float>{});
  auto e = error_of(request<std::vector<float>>(add, std::vector<float>(8), std::vector<float>(8)));
  EXPECT_EQ(e.code(), errc::invalid_argument);
  EXPECT_TRUE(mentions(e, "nd_range")) << e.what();
}

TEST_P(kernel_errors, spawning_without_a_variant_for_the_backend) {
  kernel::source only_other = cuda()
                                  ? kernel::source{"__kernel void k() {}", "", ""}
                                  : kernel::source{"", "extern \"C\" __global__ void k() {}", ""};
  try {
    sys.spawn_kernel(only_other, "k", nd_range{{1}}, on(dev), priv<int>{0});
    ADD_FAILURE() << "spawned without a variant";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_TRUE(mentions(e, "has no " + std::string{cuda() ? "CUDA" : "OpenCL"} + " variant for"))
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(devices, kernel_errors, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(kernel_errors);

}  // namespace
}  // namespace troupe::test
