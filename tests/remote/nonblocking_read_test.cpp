// Non-blocking reads: they return without waiting for their bytes, the connection goes on with
// later calls, and the bytes are in place whenever OpenCL says they must be (a finish, a wait,
// a complete status, a callback, a later blocking command). Checked against CPU references.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

std::vector<cl_int> sequence_from(cl_int first, std::size_t count) {
  std::vector<cl_int> values(count);
  std::iota(values.begin(), values.end(), first);
  return values;
}

mem_ref buffer_holding(const side& s, const std::vector<cl_int>& values) {
  return make_buffer(s.context, values.size() * sizeof(cl_int), CL_MEM_COPY_HOST_PTR,
                     const_cast<cl_int*>(values.data()));
}

class remote_nonblocking_read : public remote_test {};

TEST_F(remote_nonblocking_read, returns_at_once_behind_an_unset_user_event) {
  // Before, the read waited for its bytes: behind a gate only this thread opens, it never
  // returned. Now it returns, later calls on the same connection are served, and the bytes
  // land once the gate opens.
  const auto values = sequence_from(100, 4096);
  auto source = buffer_holding(remote, values);
  cl_int status = CL_SUCCESS;
  event_ref gate(clCreateUserEvent(remote.context, &status));
  ASSERT_CL(status);
  std::vector<cl_int> back(values.size(), -1);
  event_ref read;
  ASSERT_CL(within(20s, "a non-blocking read behind a user event", [&] {
    return clEnqueueReadBuffer(remote.queue, source, CL_FALSE, 0, values.size() * 4, back.data(), 1,
                               gate.ptr(), read.out());
  }));
  EXPECT_GT(info<cl_int>(clGetEventInfo, read.get(), CL_EVENT_COMMAND_EXECUTION_STATUS),
            CL_COMPLETE);
  EXPECT_EQ(back[0], -1) << "bytes landed before the read could have run";

  // Later requests on this thread's connection are answered meanwhile.
  auto other = make_buffer(remote.context, 64);
  EXPECT_EQ(info<std::size_t>(clGetMemObjectInfo, other.get(), CL_MEM_SIZE), 64u);

  ASSERT_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL(within(20s, "clWaitForEvents", [&] { return clWaitForEvents(1, read.ptr()); }));
  EXPECT_EQ(back, values);
}

TEST_F(remote_nonblocking_read, bytes_are_in_place_at_each_synchronizing_call) {
  const std::size_t count = 1 << 16;
  const auto a = sequence_from(1, count), b = sequence_from(-7, count), c = sequence_from(3, count),
             d = sequence_from(1000, count);
  auto buffer_a = buffer_holding(remote, a), buffer_b = buffer_holding(remote, b),
       buffer_c = buffer_holding(remote, c), buffer_d = buffer_holding(remote, d);
  std::vector<cl_int> into_a(count), into_b(count), into_c(count), into_d(count);
  const std::size_t bytes = count * 4;

  // clFinish.
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer_a, CL_FALSE, 0, bytes, into_a.data(), 0,
                                nullptr, nullptr));
  ASSERT_CL(clFinish(remote.queue));
  EXPECT_EQ(into_a, a) << "after clFinish";

  // clWaitForEvents.
  event_ref read_b;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer_b, CL_FALSE, 0, bytes, into_b.data(), 0,
                                nullptr, read_b.out()));
  ASSERT_CL(clWaitForEvents(1, read_b.ptr()));
  EXPECT_EQ(into_b, b) << "after clWaitForEvents";

  // A status of CL_COMPLETE.
  event_ref read_c;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer_c, CL_FALSE, 0, bytes, into_c.data(), 0,
                                nullptr, read_c.out()));
  ASSERT_CL(clFlush(remote.queue));
  ASSERT_TRUE(eventually(20s, [&] {
    return info<cl_int>(clGetEventInfo, read_c.get(), CL_EVENT_COMMAND_EXECUTION_STATUS) ==
           CL_COMPLETE;
  }));
  EXPECT_EQ(into_c, c) << "once its status was CL_COMPLETE";

  // A completion callback: it sees the bytes.
  struct seen {
    std::vector<cl_int>* into;
    std::vector<cl_int> copy;
    std::atomic<bool> done{false};
  } callback_saw{&into_d, {}, {}};
  event_ref read_d;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer_d, CL_FALSE, 0, bytes, into_d.data(), 0,
                                nullptr, read_d.out()));
  ASSERT_CL(clSetEventCallback(
      read_d, CL_COMPLETE,
      [](cl_event, cl_int, void* data) {
        auto* saw = static_cast<seen*>(data);
        saw->copy = *saw->into;
        saw->done = true;
      },
      &callback_saw));
  ASSERT_CL(clFlush(remote.queue));
  ASSERT_TRUE(eventually(20s, [&] { return callback_saw.done.load(); }));
  EXPECT_EQ(callback_saw.copy, d) << "inside the completion callback";

  // A later blocking command on the same in-order queue.
  std::fill(into_a.begin(), into_a.end(), 0);
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer_a, CL_FALSE, 0, bytes, into_a.data(), 0,
                                nullptr, nullptr));
  cl_int first = 0;
  ASSERT_CL(
      clEnqueueReadBuffer(remote.queue, buffer_b, CL_TRUE, 0, 4, &first, 0, nullptr, nullptr));
  EXPECT_EQ(first, b[0]);
  EXPECT_EQ(into_a, a) << "after a later blocking read";
}

TEST_F(remote_nonblocking_read, a_finish_on_another_thread_puts_the_bytes_in_place) {
  const auto values = sequence_from(42, 1 << 15);
  auto source = buffer_holding(remote, values);
  std::vector<cl_int> back(values.size());
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, source, CL_FALSE, 0, values.size() * 4, back.data(),
                                0, nullptr, nullptr));
  // The reply comes on this thread's connection; the other thread takes it from there.
  cl_int finished = CL_INVALID_VALUE;
  std::vector<cl_int> seen;
  std::thread other([&] {
    finished = clFinish(remote.queue);
    seen = back;
  });
  other.join();
  ASSERT_CL(finished);
  EXPECT_EQ(seen, values);
}

TEST_F(remote_nonblocking_read, a_write_from_a_reads_memory_sends_what_the_read_brought) {
  // The write waits for the read; it takes its bytes from the memory the read fills.
  const auto values = sequence_from(-500, 1 << 14);
  const std::size_t bytes = values.size() * 4;
  auto source = buffer_holding(remote, values);
  auto target = make_buffer(remote.context, bytes);
  std::vector<cl_int> staging(values.size(), 0);
  event_ref read, written;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, source, CL_FALSE, 0, bytes, staging.data(), 0,
                                nullptr, read.out()));
  ASSERT_CL(clEnqueueWriteBuffer(remote.queue, target, CL_FALSE, 0, bytes, staging.data(), 1,
                                 read.ptr(), written.out()));
  std::vector<cl_int> back(values.size());
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, target, CL_TRUE, 0, bytes, back.data(), 1,
                                written.ptr(), nullptr));
  EXPECT_EQ(back, values);
}

TEST_F(remote_nonblocking_read, a_large_read_and_a_thousand_small_ones) {
  // 20 MiB crosses as three pieces; the small reads are all in flight together.
  const std::size_t large = 5 << 20;  // ints
  const auto values = sequence_from(9, large);
  auto source = buffer_holding(remote, values);
  std::vector<cl_int> back(large);
  event_ref whole;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, source, CL_FALSE, 0, large * 4, back.data(), 0,
                                nullptr, whole.out()));
  std::vector<cl_int> small(1000 * 16);
  for (std::size_t i = 0; i < 1000; ++i) {
    ASSERT_CL(clEnqueueReadBuffer(remote.queue, source, CL_FALSE, i * 4096 * 4, 16 * 4,
                                  small.data() + i * 16, 0, nullptr, nullptr));
  }
  ASSERT_CL(clWaitForEvents(1, whole.ptr()));
  EXPECT_TRUE(back == values) << "the large read differs";
  ASSERT_CL(clFinish(remote.queue));
  for (std::size_t i = 0; i < 1000; ++i) {
    for (std::size_t j = 0; j < 16; ++j) {
      ASSERT_EQ(small[i * 16 + j], values[i * 4096 + j]) << "small read " << i << ", int " << j;
    }
  }
}

TEST_F(remote_nonblocking_read, rectangles_and_maps) {
  // A 6 x 4 box of bytes out of a 16 x 8 buffer, into a host array with a row pitch of 10.
  const std::size_t row = 16, rows = 8;
  std::vector<unsigned char> bytes(row * rows);
  std::iota(bytes.begin(), bytes.end(), static_cast<unsigned char>(1));
  auto buffer = make_buffer(remote.context, bytes.size(), CL_MEM_COPY_HOST_PTR, bytes.data());
  const std::size_t origin[3] = {3, 2, 0}, host_origin[3] = {1, 1, 0}, region[3] = {6, 4, 1};
  const std::size_t host_row = 10;
  std::vector<unsigned char> host(host_row * 6, 0xee), expected = host;
  for (std::size_t y = 0; y < region[1]; ++y) {
    std::memcpy(expected.data() + (host_origin[1] + y) * host_row + host_origin[0],
                bytes.data() + (origin[1] + y) * row + origin[0], region[0]);
  }
  event_ref read;
  ASSERT_CL(clEnqueueReadBufferRect(remote.queue, buffer, CL_FALSE, origin, host_origin, region,
                                    row, 0, host_row, 0, host.data(), 0, nullptr, read.out()));
  ASSERT_CL(clWaitForEvents(1, read.ptr()));
  EXPECT_EQ(host, expected) << "rect read";

  // A non-blocking map: the mapped bytes are there once its event is complete.
  cl_int status = CL_SUCCESS;
  event_ref mapped;
  auto* view = static_cast<unsigned char*>(clEnqueueMapBuffer(
      remote.queue, buffer, CL_FALSE, CL_MAP_READ, 16, 32, 0, nullptr, mapped.out(), &status));
  ASSERT_CL(status);
  ASSERT_CL(clWaitForEvents(1, mapped.ptr()));
  EXPECT_TRUE(std::equal(view, view + 32, bytes.begin() + 16)) << "mapped bytes";
  ASSERT_CL(clEnqueueUnmapMemObject(remote.queue, buffer, view, 0, nullptr, nullptr));
  // Unmapped before anything waited: the unmap must not free memory the bytes still go to.
  view = static_cast<unsigned char*>(clEnqueueMapBuffer(remote.queue, buffer, CL_FALSE, CL_MAP_READ,
                                                        0, 64, 0, nullptr, nullptr, &status));
  ASSERT_CL(status);
  ASSERT_CL(clEnqueueUnmapMemObject(remote.queue, buffer, view, 0, nullptr, nullptr));
  ASSERT_CL(clFinish(remote.queue));
}

TEST_F(remote_nonblocking_read, failures_reach_the_next_finish_and_the_event) {
  auto buffer = make_buffer(remote.context, 256);
  std::vector<unsigned char> back(512);
  // Past the end: the server's enqueue refuses it.
  event_ref refused;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_FALSE, 128, 256, back.data(), 0, nullptr,
                                refused.out()));
  EXPECT_EQ(clFinish(remote.queue), CL_INVALID_VALUE);
  EXPECT_LT(info<cl_int>(clGetEventInfo, refused.get(), CL_EVENT_COMMAND_EXECUTION_STATUS), 0);
  ASSERT_CL(clFinish(remote.queue));  // a failure is reported once

  // Behind a user event that fails: the read fails on the device, and nothing hangs.
  cl_int status = CL_SUCCESS;
  event_ref gate(clCreateUserEvent(remote.context, &status));
  ASSERT_CL(status);
  event_ref read;
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_FALSE, 0, 256, back.data(), 1, gate.ptr(),
                                read.out()));
  ASSERT_CL(clFlush(remote.queue));
  ASSERT_CL(clSetUserEventStatus(gate, -1));
  EXPECT_NE(within(20s, "clWaitForEvents", [&] { return clWaitForEvents(1, read.ptr()); }),
            CL_SUCCESS);
  EXPECT_LT(info<cl_int>(clGetEventInfo, read.get(), CL_EVENT_COMMAND_EXECUTION_STATUS), 0);
  within(20s, "clFinish", [&] { return clFinish(remote.queue); });
}

}  // namespace
}  // namespace troupe::remote_test
