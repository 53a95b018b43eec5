// No scheduler worker waits for a device, also where a worker drops the last reference to a
// queue, a buffer or a command's event: the destructors that wait for the device (clFinish,
// clWaitForEvents, cuEventSynchronize) run elsewhere, or find nothing left to wait for. Every
// such call counts itself when made on a worker (device_waits); the count must stay 0.
#include <future>
#include <memory>
#include <optional>

#include "blocking_read_stand_in.hpp"
#include "device_fixture.hpp"
#include "troupe/core/request.hpp"

namespace troupe::test {
namespace {

std::size_t waits_on_workers(const device& dev) {
  return dev.state()->waits_on_workers();
}

using worker_waits = device_test;

TEST_P(worker_waits, a_queue_whose_last_handle_a_worker_drops_is_finished_off_the_worker) {
  auto p = compile_test_kernels();
  const unsigned n = 4096;
  auto q = dev.make_queue();
  {
    auto flags = dev.allocate<int>(n);
    auto ran = q.launch(p, "spin_then_set", nd_range{{n}}, flags, 7, 1u << 12);
    EXPECT_EQ(q.read(flags, after(ran)).get(), std::vector<int>(n, 7));
  }
  // Takes the queue's handle; then, asked, drops it once nothing else holds the queue (the
  // completion thread lets go of its commands soon), and says whether it did.
  auto holder = sys.spawn([](event_based_actor*) {
    auto held = std::make_shared<std::optional<device_queue>>();
    return behavior{[held](device_queue given) {
                      *held = std::move(given);
                      return 0;
                    },
                    [held](int) {
                      if (!(*held)->state()->unique()) return 0;
                      held->reset();  // the last reference, on this worker
                      return 1;
                    }};
  });
  EXPECT_EQ(request<int>(holder, q).get(), 0);
  q = device_queue{};
  while (request<int>(holder, 1).get() == 0) {
  }
  EXPECT_EQ(waits_on_workers(dev), 0u) << "a queue's destructor waited on a worker";
}

INSTANTIATE_TEST_SUITE_P(devices, worker_waits, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(worker_waits);

/// OpenCL with its copies staged as a GPU's, so that a read's event holds a pinned block that its
/// destructor would wait for; skips without an OpenCL device.
class staged_worker_waits : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opencl = sys.devices().of(backend::opencl);
    if (opencl.empty()) GTEST_SKIP() << "no OpenCL device";
    dev = opencl.front();
  }

  environment_setting staging{"TROUPE_OPENCL_STAGING", "all"};
  actor_system sys{device_config()};
  device dev;
};

TEST_F(staged_worker_waits, a_worker_drops_every_handle_while_a_long_kernel_and_reads_run) {
  auto p = dev.compile(test_kernels().for_device(dev)).get();
  // Large enough to be staged in chunks; the kernel spins long before it writes.
  const unsigned n = (1u << 20) / sizeof(int) + 5;
  std::promise<future<std::vector<int>>> handed;
  auto worker = sys.spawn([&, p](int value) {
    auto q = dev.make_queue();
    auto flags = dev.allocate<int>(n);
    auto ran = q.launch(p, "spin_then_set", nd_range{{n}}, flags, value, 1u << 14);
    auto abandoned = q.read(flags, after(ran));  // dropped here, unfinished
    handed.set_value(q.read(flags, after(ran)));
    return 0;  // q, flags, ran and abandoned go here, on the worker, while the kernel runs
  });
  EXPECT_EQ(request<int>(worker, 11).get(), 0);
  EXPECT_EQ(handed.get_future().get().get(), std::vector<int>(n, 11));
  EXPECT_EQ(waits_on_workers(dev), 0u) << "a destructor waited for the device on a worker";
}

}  // namespace
}  // namespace troupe::test
