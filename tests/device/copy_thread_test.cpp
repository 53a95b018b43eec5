// Where the driver may block in a read until the device is done (NVIDIA's OpenCL), the read is
// issued by the device's copy thread: a scheduler worker that submits one, or makes its
// dependency ready, goes on at once. PoCL does not block, so a stand-in holds the issuing thread
// (blocking_read_stand_in.hpp), and TROUPE_OPENCL_READING=copy-thread treats PoCL's reads as
// NVIDIA's are.
#include <future>
#include <numeric>
#include <thread>

#include "blocking_read_stand_in.hpp"
#include "device_fixture.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/core/request.hpp"

namespace troupe::test {
namespace {

std::vector<int> numbers(std::size_t count) {
  std::vector<int> out(count);
  std::iota(out.begin(), out.end(), -7);
  return out;
}

/// A system of one worker whose OpenCL reads count as blocking; skips without an OpenCL device.
class copy_thread : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opencl = sys.devices().of(backend::opencl);
    if (opencl.empty()) GTEST_SKIP() << "no OpenCL device";
    dev = opencl.front();
  }

  /// Whether the one worker answers another actor's message.
  bool worker_answers() {
    auto echo = sys.spawn([](int x) { return x + 1; });
    return request<int>(echo, 41).get() == 42;
  }

  environment_setting reading{"TROUPE_OPENCL_READING", "copy-thread"};
  actor_system sys{device_config(1)};
  device dev;
};

TEST_F(copy_thread, a_read_submitted_on_a_worker_is_issued_off_it_while_the_worker_goes_on) {
  const auto data = numbers(4099);
  auto buf = dev.allocate<int>(data.size());
  buf.write(data).get();
  blocking_read_stand_in driver{dev};
  std::promise<future<std::vector<int>>> submitted;
  auto reader = sys.spawn([&](int) {
    submitted.set_value(buf.read());
    return 0;
  });
  auto answered = request<int>(reader, 1);
  ASSERT_TRUE(driver.wait_for_a_read()) << "the read was issued on the scheduler's worker";
  // The issuing thread is held, as NVIDIA's driver holds it until the copy is done.
  EXPECT_TRUE(worker_answers());
  driver.release();
  EXPECT_EQ(answered.get(), 0);
  EXPECT_EQ(submitted.get_future().get().get(), data);
  EXPECT_EQ(driver.on_workers(), 0);
}

TEST_F(copy_thread, a_read_whose_dependency_a_worker_completes_is_issued_off_it) {
  const auto data = numbers(1000);
  auto buf = dev.allocate<int>(data.size());
  buf.write(data).get();
  blocking_read_stand_in driver{dev};
  promise<void> go;
  auto read = buf.read(after(go.get_future()));
  auto setter = sys.spawn([&](int) {
    go.set_value();  // the read's queue issues it from here, on the worker
    return 0;
  });
  auto answered = request<int>(setter, 1);
  ASSERT_TRUE(driver.wait_for_a_read()) << "the read was issued on the scheduler's worker";
  EXPECT_TRUE(worker_answers());
  driver.release();
  EXPECT_EQ(answered.get(), 0);
  EXPECT_EQ(std::move(read).get(), data);
  EXPECT_EQ(driver.on_workers(), 0);
}

TEST_F(copy_thread, commands_after_a_held_read_keep_their_order) {
  // A worker submits a read, then a write and a read while the copy thread is held in the
  // first: the second read sees the write, the first does not.
  const auto before = numbers(512);
  auto after_write = before;
  for (auto& x : after_write) x *= 3;
  auto buf = dev.allocate<int>(before.size());
  buf.write(before).get();
  blocking_read_stand_in driver{dev};
  std::promise<future<std::vector<int>>> first, second;
  std::promise<future<void>> written;
  auto submitter = sys.spawn([&](int step) {
    if (step == 1) {
      first.set_value(buf.read());
    } else {
      written.set_value(buf.write(after_write));
      second.set_value(buf.read());
    }
    return step;
  });
  EXPECT_EQ(request<int>(submitter, 1).get(), 1);
  ASSERT_TRUE(driver.wait_for_a_read()) << "the read was issued on the scheduler's worker";
  EXPECT_EQ(request<int>(submitter, 2).get(), 2);  // the worker goes on
  driver.release();
  EXPECT_EQ(first.get_future().get().get(), before);
  written.get_future().get().get();
  EXPECT_EQ(second.get_future().get().get(), after_write);
  EXPECT_EQ(driver.on_workers(), 0);
}

TEST_F(copy_thread, a_read_submitted_by_a_program_thread_is_issued_there) {
  // A program's own thread may wait: it issues the read itself, as without troupe, and saves
  // the copy thread's wake-up.
  const auto data = numbers(100);
  auto buf = dev.allocate<int>(data.size());
  buf.write(data).get();
  int issued_here = 0;
  const auto here = std::this_thread::get_id();
  dev.state()->set_blocking_issue_hook([&] { issued_here += std::this_thread::get_id() == here; });
  EXPECT_EQ(buf.read().get(), data);
  EXPECT_EQ(issued_here, 1);
}

}  // namespace
}  // namespace troupe::test
