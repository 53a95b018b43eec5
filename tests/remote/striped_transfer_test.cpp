// Large reads and writes striped over several connections (TROUPE_ICD_STREAMS=4, set for this
// binary before its first OpenCL call): the bytes, their place among the queue's other
// commands, events and wait lists, many threads at once. Checked against CPU references.
#include <dirent.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "common_kernels.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

// Before the first OpenCL call of the process: the driver reads it once.
[[maybe_unused]] const bool streams_set = ::setenv("TROUPE_ICD_STREAMS", "4", 1) == 0;
[[maybe_unused]] auto* const environment =
    ::testing::AddGlobalTestEnvironment(new remote_environment);

constexpr std::size_t mib = std::size_t{1} << 20;

// The sockets this process holds: a striped transfer adds the bulk connections of its stripes.
std::size_t open_sockets() {
  std::size_t count = 0;
  DIR* folder = ::opendir("/proc/self/fd");
  if (folder == nullptr) return 0;
  while (dirent* entry = ::readdir(folder)) {
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    std::array<char, 64> target{};
    ssize_t length = ::readlink(path.c_str(), target.data(), target.size() - 1);
    if (length > 0 &&
        std::string(target.data(), static_cast<std::size_t>(length)).starts_with("socket:"))
      ++count;
  }
  ::closedir(folder);
  return count;
}

// Bytes no step of a test writes by accident: depend on the place and on a seed.
std::vector<unsigned char> pattern(std::size_t size, unsigned seed) {
  std::vector<unsigned char> bytes(size);
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<unsigned char>((i * 131 + seed) % 251);
  return bytes;
}

// The first place where `got` differs from `expected`, as a message; empty when equal.
std::string first_difference(const unsigned char* got, const unsigned char* expected,
                             std::size_t size) {
  if (std::memcmp(got, expected, size) == 0) return {};
  std::size_t at = 0;
  while (got[at] == expected[at]) ++at;
  return "byte " + std::to_string(at) + " of " + std::to_string(size) + " is " +
         std::to_string(got[at]) + ", expected " + std::to_string(expected[at]);
}

class remote_striped_transfer : public remote_test {
 protected:
  void SetUp() override {
    remote_test::SetUp();
    // The driver keeps its bulk connections for the process: count before the first stripe.
    static const std::size_t before_any_stripe = open_sockets();
    sockets_without_bulk = before_any_stripe;
  }
  // Every test here stripes: the bulk connections of 4 stripes are open by its end (three
  // beyond the caller's own), or the transfers went on one connection and proved nothing.
  void TearDown() override {
    EXPECT_GE(open_sockets(), sockets_without_bulk + 3)
        << "no bulk connections were opened: nothing was striped";
  }
  std::size_t sockets_without_bulk = 0;
};

TEST_F(remote_striped_transfer, sizes_around_the_thresholds_and_offsets_match_the_cpu) {
  // 16 MiB is the least striped size; 40 MiB + 1 is one byte over five pieces; 37 MiB + 13
  // is no multiple of the stripes; below 16 MiB the plain path, as a reference of its own.
  const std::vector<std::size_t> sizes{16 * mib - 1, 16 * mib, 16 * mib + 1, 40 * mib + 1,
                                       37 * mib + 13};
  for (std::size_t offset : {std::size_t{0}, std::size_t{4093}}) {
    for (std::size_t size : sizes) {
      SCOPED_TRACE("size " + std::to_string(size) + " at offset " + std::to_string(offset));
      const std::size_t whole = offset + size + 7;
      auto buffer = make_buffer(remote.context, whole);
      const unsigned char around = 0xee;
      ASSERT_CL(
          clEnqueueFillBuffer(remote.queue, buffer, &around, 1, 0, whole, 0, nullptr, nullptr));
      const auto data = pattern(size, static_cast<unsigned>(size + offset));
      ASSERT_CL(clEnqueueWriteBuffer(remote.queue, buffer, CL_TRUE, offset, size, data.data(), 0,
                                     nullptr, nullptr));
      std::vector<unsigned char> expected(whole, around);
      std::memcpy(expected.data() + offset, data.data(), size);
      std::vector<unsigned char> back(whole, 0);
      ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, whole, back.data(), 0,
                                    nullptr, nullptr));
      EXPECT_EQ(first_difference(back.data(), expected.data(), whole), "");
      std::vector<unsigned char> part(size, 0);
      ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, offset, size, part.data(), 0,
                                    nullptr, nullptr));
      EXPECT_EQ(first_difference(part.data(), data.data(), size), "");
    }
  }
}

TEST_F(remote_striped_transfer, pieces_keep_their_place_among_kernels_of_an_in_order_queue) {
  // A write between two kernels, then a read: a piece enqueued before the first kernel would
  // be overwritten by it (values + 1000), one after the second would miss its + 7, and a read
  // piece enqueued before the second kernel would miss it too.
  const std::size_t count = 16 * mib / sizeof(cl_int) + 12345;
  const std::size_t bytes = count * sizeof(cl_int);
  auto program = build_program(remote, common_kernels);
  auto increment = make_kernel(program, "increment");
  auto buffer = make_buffer(remote.context, bytes);
  ASSERT_CL(clSetKernelArg(increment, 0, sizeof(cl_mem), buffer.ptr()));
  const std::size_t global = count;
  for (int round = 0; round < 3; ++round) {
    for (bool blocking_write : {false, true}) {
      SCOPED_TRACE("round " + std::to_string(round) + (blocking_write ? ", blocking" : ""));
      std::vector<cl_int> values(count);
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<cl_int>(i * 3 + round);
      const cl_int zero = 0, before = 1000, after = 7;
      ASSERT_CL(clEnqueueFillBuffer(remote.queue, buffer, &zero, sizeof zero, 0, bytes, 0, nullptr,
                                    nullptr));
      ASSERT_CL(clSetKernelArg(increment, 1, sizeof before, &before));
      ASSERT_CL(clEnqueueNDRangeKernel(remote.queue, increment, 1, nullptr, &global, nullptr, 0,
                                       nullptr, nullptr));
      ASSERT_CL(clEnqueueWriteBuffer(remote.queue, buffer, blocking_write ? CL_TRUE : CL_FALSE, 0,
                                     bytes, values.data(), 0, nullptr, nullptr));
      ASSERT_CL(clSetKernelArg(increment, 1, sizeof after, &after));
      ASSERT_CL(clEnqueueNDRangeKernel(remote.queue, increment, 1, nullptr, &global, nullptr, 0,
                                       nullptr, nullptr));
      std::vector<cl_int> back(count, -1);
      ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, bytes, back.data(), 0,
                                    nullptr, nullptr));
      std::size_t wrong = 0, first_wrong = count;
      for (std::size_t i = 0; i < count; ++i) {
        if (back[i] != values[i] + after) {
          if (wrong++ == 0) first_wrong = i;
        }
      }
      EXPECT_EQ(wrong, 0u) << "element " << first_wrong << " is "
                           << (first_wrong < count ? back[first_wrong] : 0) << ", expected "
                           << (first_wrong < count ? values[first_wrong] + after : 0);
    }
  }
}

TEST_F(remote_striped_transfer, wait_lists_hold_striped_transfers_and_their_events_complete) {
  const std::size_t size = 24 * mib + 5;
  auto buffer = make_buffer(remote.context, size);
  cl_int status = CL_SUCCESS;
  event_ref gate(clCreateUserEvent(remote.context, &status));
  ASSERT_CL(status);
  const auto data = pattern(size, 17);
  event_ref written;
  ASSERT_CL(clEnqueueWriteBuffer(remote.queue, buffer, CL_FALSE, 0, size, data.data(), 1,
                                 gate.ptr(), written.out()));
  ASSERT_NE(written.get(), nullptr);
  // Behind the unset gate, the write cannot have run.
  EXPECT_GT(info<cl_int>(clGetEventInfo, written.get(), CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE);
  // An event another thread's connection has just made (its marker is pipelined): a bulk
  // stripe naming it must be fenced behind that frame, or the server knows no such event.
  queue_ref other_queue;
  event_ref other_marker;
  std::thread([&] {
    cl_int made = CL_SUCCESS;
    other_queue = queue_ref(clCreateCommandQueue(remote.context, remote.device, 0, &made));
    if (made == CL_SUCCESS) {
      made = clEnqueueMarkerWithWaitList(other_queue, 0, nullptr, other_marker.out());
    }
  }).join();
  ASSERT_NE(other_marker.get(), nullptr);
  const auto second = pattern(size, 23);
  std::vector<cl_event> both{written.get(), other_marker.get()};
  event_ref rewritten;
  ASSERT_CL(clEnqueueWriteBuffer(remote.queue, buffer, CL_FALSE, 0, size, second.data(), 2,
                                 both.data(), rewritten.out()));
  ASSERT_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL(within(60s, "clWaitForEvents on a striped write",
                   [&] { return clWaitForEvents(1, written.ptr()); }));
  EXPECT_EQ(info<cl_int>(clGetEventInfo, written.get(), CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE);
  // A blocking striped read waiting for the second write's event, with an event of its own.
  std::vector<unsigned char> back(size, 0);
  event_ref read;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, size, back.data(), 1,
                                rewritten.ptr(), read.out()));
  ASSERT_NE(read.get(), nullptr);
  EXPECT_EQ(info<cl_int>(clGetEventInfo, read.get(), CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE);
  EXPECT_EQ(info<cl_int>(clGetEventInfo, rewritten.get(), CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE);
  EXPECT_EQ(first_difference(back.data(), second.data(), size), "");
}

TEST_F(remote_striped_transfer, a_failed_wait_list_fails_a_striped_read_and_write) {
  const std::size_t size = 20 * mib;
  auto buffer = make_buffer(remote.context, size);
  cl_int status = CL_SUCCESS;
  event_ref failed(clCreateUserEvent(remote.context, &status));
  ASSERT_CL(status);
  ASSERT_CL(clSetUserEventStatus(failed, -1));
  std::vector<unsigned char> back(size, 0x11);
  EXPECT_EQ(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, size, back.data(), 1,
                                failed.ptr(), nullptr),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  EXPECT_EQ(back[0], 0x11) << "a failed read put bytes in place";
  const auto data = pattern(size, 3);
  EXPECT_EQ(clEnqueueWriteBuffer(remote.queue, buffer, CL_TRUE, 0, size, data.data(), 1,
                                 failed.ptr(), nullptr),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  // Past the buffer's end: refused as OpenCL does, before anything is sent.
  EXPECT_EQ(clEnqueueWriteBuffer(remote.queue, buffer, CL_TRUE, 1, size, data.data(), 0, nullptr,
                                 nullptr),
            CL_INVALID_VALUE);
  // The queue goes on: a later striped transfer succeeds.
  ASSERT_CL(clEnqueueWriteBuffer(remote.queue, buffer, CL_TRUE, 0, size, data.data(), 0, nullptr,
                                 nullptr));
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, size, back.data(), 0, nullptr,
                                nullptr));
  EXPECT_EQ(first_difference(back.data(), data.data(), size), "");
}

TEST_F(remote_striped_transfer, an_earlier_read_into_the_same_bytes_lands_before_a_striped_one) {
  const std::size_t small = 2 * mib, large = 24 * mib;
  const auto old_bytes = pattern(small, 3), new_bytes = pattern(large, 11);
  auto older = make_buffer(remote.context, small);
  auto newer = make_buffer(remote.context, large);
  ASSERT_CL(clEnqueueWriteBuffer(remote.queue, older, CL_TRUE, 0, small, old_bytes.data(), 0,
                                 nullptr, nullptr));
  ASSERT_CL(clEnqueueWriteBuffer(remote.queue, newer, CL_TRUE, 0, large, new_bytes.data(), 0,
                                 nullptr, nullptr));
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    std::vector<unsigned char> host(large, 0);
    // A non-blocking read into the last bytes (a bulk stripe's, not the caller's connection's),
    // then a striped blocking read over all of them: on an in-order queue the second is later,
    // so its bytes are the ones left.
    ASSERT_CL(clEnqueueReadBuffer(remote.queue, older, CL_FALSE, 0, small,
                                  host.data() + large - small, 0, nullptr, nullptr));
    ASSERT_CL(clEnqueueReadBuffer(remote.queue, newer, CL_TRUE, 0, large, host.data(), 0, nullptr,
                                  nullptr));
    ASSERT_CL(clFinish(remote.queue));
    EXPECT_EQ(first_difference(host.data(), new_bytes.data(), large), "");
  }
}

TEST_F(remote_striped_transfer, many_threads_stripe_at_once) {
  const std::size_t size = 20 * mib + 77;
  constexpr int threads = 4;
  std::vector<std::string> failures(threads);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      cl_int status = CL_SUCCESS;
      cl_command_queue queue = clCreateCommandQueue(remote.context, remote.device, 0, &status);
      cl_mem buffer = clCreateBuffer(remote.context, CL_MEM_READ_WRITE, size, nullptr, &status);
      for (int round = 0; round < 3 && status == CL_SUCCESS && failures[t].empty(); ++round) {
        const auto data = pattern(size, static_cast<unsigned>(t * 10 + round));
        std::vector<unsigned char> back(size, 0);
        status = clEnqueueWriteBuffer(queue, buffer, round % 2 == 0 ? CL_FALSE : CL_TRUE, 0, size,
                                      data.data(), 0, nullptr, nullptr);
        if (status == CL_SUCCESS) {
          status = clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, size, back.data(), 0, nullptr,
                                       nullptr);
        }
        if (status == CL_SUCCESS) failures[t] = first_difference(back.data(), data.data(), size);
      }
      if (status != CL_SUCCESS) failures[t] = "status " + std::to_string(status);
      clReleaseMemObject(buffer);
      clReleaseCommandQueue(queue);
    });
  }
  for (auto& thread : running) thread.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
}  // namespace troupe::remote_test
