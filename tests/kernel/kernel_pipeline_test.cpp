// Kernel actors composed: pipelines whose intermediate data stays on the device, mixed with
// CPU actors; mapping functions with a message type of their own; many requests at once.
#include <cmath>
#include <numeric>
#include <thread>

#include "kernel_fixture.hpp"

namespace troupe::test {
namespace {

using namespace troupe::kernel;

/// The paper's pre- and post-processing example: a matrix as a message of its own.
struct square_matrix {
  std::size_t n = 0;
  std::vector<float> values;
};

std::vector<float> multiply_on_cpu(const square_matrix& a, const square_matrix& b) {
  std::vector<float> c(a.n * a.n);
  for (std::size_t y = 0; y < a.n; ++y)
    for (std::size_t x = 0; x < a.n; ++x) {
      float sum = 0;
      for (std::size_t k = 0; k < a.n; ++k) sum += a.values[y * a.n + k] * b.values[k * a.n + x];
      c[y * a.n + x] = sum;
    }
  return c;
}

// Small whole numbers: every product and sum is exact in float, on any device.
square_matrix some_matrix(std::size_t n, unsigned seed) {
  square_matrix m{n, std::vector<float>(n * n)};
  for (std::size_t i = 0; i < n * n; ++i) m.values[i] = static_cast<float>((i * seed) % 7) - 3.0f;
  return m;
}

class kernel_pipeline : public kernel_test {
 protected:
  actor scale(float factor, bool ref_in, bool ref_out, std::size_t n) {
    auto range = nd_range{{n}};
    if (ref_in && ref_out)
      return sys.spawn_kernel(kernel_test_sources(), "scale", range, on(dev), in<float, ref>{},
                              out<float, ref>{}, priv<float>{factor});
    if (ref_in)
      return sys.spawn_kernel(kernel_test_sources(), "scale", range, on(dev), in<float, ref>{},
                              out<float, val>{}, priv<float>{factor});
    if (ref_out)
      return sys.spawn_kernel(kernel_test_sources(), "scale", range, on(dev), in<float, val>{},
                              out<float, ref>{}, priv<float>{factor});
    return sys.spawn_kernel(kernel_test_sources(), "scale", range, on(dev), in<float, val>{},
                            out<float, val>{}, priv<float>{factor});
  }
};

TEST_P(kernel_pipeline, three_stages_keep_their_data_on_the_device) {
  const std::size_t n = 2048;
  // a: host -> device; b: device -> device; c: device -> host.
  auto a = scale(2, false, true, n), b = scale(3, true, true, n), c = scale(-1, true, false, n);
  auto pipeline = c * b * a;
  std::vector<float> x(n);
  std::iota(x.begin(), x.end(), 1.0f);
  auto y = request<std::vector<float>>(pipeline, x).get();
  ASSERT_EQ(y.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * -6.0f) << i;
}

TEST_P(kernel_pipeline, a_twenty_stage_pipeline_of_one_kernel) {
  const std::size_t n = 256;
  actor pipeline = scale(1.5f, true, false, n);
  for (int stage = 0; stage < 18; ++stage) pipeline = pipeline * scale(1.0f, true, true, n);
  pipeline = pipeline * scale(2.0f, false, true, n);
  std::vector<float> x(n, 1.0f);
  auto y = request<std::vector<float>>(pipeline, x).get();
  EXPECT_EQ(y, std::vector<float>(n, 3.0f));
}

TEST_P(kernel_pipeline, cpu_and_kernel_actors_mixed) {
  const std::size_t n = 1000;
  auto make_input = sys.spawn([n](int first) {
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), static_cast<float>(first));
    return v;
  });
  auto total = sys.spawn(
      [](const std::vector<float>& v) { return std::accumulate(v.begin(), v.end(), 0.0); });
  auto pipeline = total * scale(0.5f, true, false, n) * scale(4.0f, false, true, n) * make_input;
  const double sum = request<double>(pipeline, 1).get();
  EXPECT_DOUBLE_EQ(sum, 2.0 * (static_cast<double>(n) * (n + 1) / 2));
}

TEST_P(kernel_pipeline, mappings_with_a_message_type_of_their_own) {
  // The range comes from the message; the response is a square_matrix again.
  auto mult = sys.spawn_kernel(
      kernel_test_sources(), "m_mult", nd_range{{1}}, on(dev),
      map_input([](const square_matrix& a, const square_matrix& b)
                    -> std::optional<
                        std::tuple<nd_range, std::vector<float>, std::vector<float>, unsigned>> {
        if (a.n != b.n || a.n == 0) return std::nullopt;
        return std::tuple{nd_range{{a.n, a.n}}, a.values, b.values, static_cast<unsigned>(a.n)};
      }),
      map_output([](std::vector<float> c) {
        auto n = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(c.size()))));
        return square_matrix{n, std::move(c)};
      }),
      in<float>{}, in<float>{}, out<float>{}, priv<unsigned, val>{});
  for (std::size_t n : {4u, 16u, 33u}) {
    auto a = some_matrix(n, 5), b = some_matrix(n, 3);
    auto c = request<square_matrix>(mult, a, b).get();
    EXPECT_EQ(c.n, n);
    EXPECT_EQ(c.values, multiply_on_cpu(a, b)) << "n = " << n;
  }
  // Refused by the mapping: an error response that says so.
  auto refused = error_of(request<square_matrix>(mult, some_matrix(4, 1), some_matrix(5, 1)));
  EXPECT_EQ(refused.code(), errc::invalid_argument);
  EXPECT_NE(std::string{refused.what()}.find("input mapping refused"), std::string::npos)
      << refused.what();
}

TEST_P(kernel_pipeline, an_output_mapping_may_send_no_response) {
  const std::size_t n = 16;
  auto only_positive =
      sys.spawn_kernel(kernel_test_sources(), "scale", nd_range{{n}}, on(dev),
                       map_output([](std::vector<float> y) -> std::optional<std::vector<float>> {
                         if (y[0] < 0) return std::nullopt;
                         return y;
                       }),
                       in<float>{}, out<float>{}, priv<float, val>{});
  EXPECT_EQ(request<std::vector<float>>(only_positive, std::vector<float>(n, 1), 2.0f).get(),
            std::vector<float>(n, 2));
  EXPECT_EQ(
      error_of(request<std::vector<float>>(only_positive, std::vector<float>(n, 1), -2.0f)).code(),
      errc::broken_promise);
}

TEST_P(kernel_pipeline, concurrent_requests_from_many_threads_to_several_actors) {
  const std::size_t n = 512;
  std::vector<actor> actors;
  for (int k = 1; k <= 4; ++k) actors.push_back(scale(static_cast<float>(k), false, false, n));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::pair<int, future<std::vector<float>>>> pending;
      for (int r = 0; r < 25; ++r) {
        std::vector<float> x(n, static_cast<float>(t * 100 + r));
        const int which = (t + r) % 4;
        pending.emplace_back(which, request<std::vector<float>>(actors[which], std::move(x)));
      }
      for (int r = 0; r < 25; ++r) {
        auto& [which, f] = pending[r];
        auto y = f.get();
        const float expected = static_cast<float>(t * 100 + r) * static_cast<float>(which + 1);
        if (y != std::vector<float>(n, expected)) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(kernel_pipeline, requests_stay_in_order_when_they_follow_other_queues) {
  // The consumer's requests come from two producers, each with its own queue, and follow the
  // producer's queue while its kernel runs. The producers never touch the data; only the order
  // of the consumer's requests decides the result, since x * 3 + k does not commute.
  const kernel::source sources{
      R"(
__kernel void pass_slowly(__global float* x, uint rounds) {
  uint acc = 0;
  for (uint r = 0; r < rounds; ++r) acc += r & 1u;
  if (acc == 1u) x[0] = -1.0f;  // never: acc is rounds / 2
}
__kernel void mul_add(__global float* x, float k) { x[0] = x[0] * 3.0f + k; }
)",
      R"(
extern "C" __global__ void pass_slowly(float* x, unsigned rounds) {
  unsigned acc = 0;
  for (unsigned r = 0; r < rounds; ++r) acc += r & 1u;
  if (acc == 1u) x[0] = -1.0f;  // never: acc is rounds / 2
}
extern "C" __global__ void mul_add(float* x, float k) { x[0] = x[0] * 3.0f + k; }
)",
      ""};
  const unsigned rounds = 1u << 16;
  std::vector<actor> producers;
  for (int i = 0; i < 2; ++i) {
    producers.push_back(sys.spawn_kernel(sources, "pass_slowly", nd_range{{1}}, on(dev),
                                         in_out<float, ref, ref>{}, priv<unsigned>{rounds}));
  }
  auto consumer = sys.spawn_kernel(sources, "mul_add", nd_range{{1}}, on(dev),
                                   in_out<float, ref, ref>{}, priv<float, val>{});
  auto memory = dev.allocate<float>(1);
  const mem_ref<float> x{memory, 1, memory.fill(0.0f).share()};
  x.ready().get();
  float expected = 0;
  std::vector<future<mem_ref<float>>> consumed;
  for (int k = 1; k <= 14; ++k) {
    auto passed = request<mem_ref<float>>(producers[k % 2], x).get();  // a ref: answered at once
    consumed.push_back(request<mem_ref<float>>(consumer, passed, static_cast<float>(k)));
    expected = expected * 3.0f + static_cast<float>(k);
  }
  mem_ref<float> last;
  for (auto& each : consumed) last = each.get();
  EXPECT_EQ(last.read().get(), std::vector<float>{expected});
}

INSTANTIATE_TEST_SUITE_P(devices, kernel_pipeline, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(kernel_pipeline);

}  // namespace
}  // namespace troupe::test
