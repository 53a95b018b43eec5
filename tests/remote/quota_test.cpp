// Per-session quotas: a session past its quota of device memory, host memory held for its
// transfers or objects fails that call, the other session is served as before, and what the
// session lets go of counts again.
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "isolation_environment.hpp"

namespace troupe::remote_test {
namespace {

// Registered here, once for the binary: the server must run before the first OpenCL call.
[[maybe_unused]] auto* const environment =
    ::testing::AddGlobalTestEnvironment(new isolation_environment);

class remote_quota : public isolation_test {};

cl_int create_status(cl_context context, std::size_t size) {
  cl_int status = CL_SUCCESS;
  mem_ref buffer(clCreateBuffer(context, 0, size, nullptr, &status));
  return status;
}

cl_int image_status(cl_context context, std::size_t width) {
  const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = width;
  desc.image_height = width;
  cl_int status = CL_SUCCESS;
  mem_ref image(clCreateImage(context, 0, &format, &desc, nullptr, &status));
  return status;
}

cl_int execution_status(cl_event event) {
  cl_int status = CL_QUEUED;
  EXPECT_CL(
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr));
  return status;
}

event_ref user_event(const side& s) {
  cl_int status = CL_SUCCESS;
  event_ref event(clCreateUserEvent(s.context, &status));
  EXPECT_CL(status);
  return event;
}

TEST_F(remote_quota, device_memory_past_the_quota_fails_that_allocation_only) {
  const std::size_t most = device_memory_quota * 3 / 4, rest = device_memory_quota / 2;
  auto held = make_buffer(first.context, most);
  ASSERT_NE(held.get(), nullptr);
  // Over the quota: refused as a device out of memory refuses, buffers and images alike.
  EXPECT_EQ(create_status(first.context, rest), CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(image_status(first.context, 512), CL_MEM_OBJECT_ALLOCATION_FAILURE);  // 1 MiB
  // The other session has a quota of its own.
  auto other = make_buffer(second.context, most);
  EXPECT_NE(other.get(), nullptr);
  EXPECT_EQ(image_status(second.context, 128), CL_SUCCESS);  // 64 KiB more
  // Released memory counts again, and within the quota everything is served.
  EXPECT_EQ(create_status(first.context, device_memory_quota / 8), CL_SUCCESS);
  held.reset();
  EXPECT_EQ(create_status(first.context, rest), CL_SUCCESS);
  EXPECT_EQ(create_status(first.context, device_memory_quota), CL_SUCCESS);
  EXPECT_EQ(image_status(first.context, 512), CL_SUCCESS);
  EXPECT_EQ(create_status(first.context, device_memory_quota + 1),
            CL_MEM_OBJECT_ALLOCATION_FAILURE);
}

TEST_F(remote_quota, host_memory_held_for_transfers_past_the_quota_fails_that_transfer_only) {
  const std::size_t most = host_memory_quota * 3 / 4, rest = host_memory_quota / 2;
  std::vector<std::uint8_t> pattern(most);
  std::iota(pattern.begin(), pattern.end(), 0);
  auto buffer = make_buffer(first.context, most, CL_MEM_COPY_HOST_PTR, pattern.data());
  // A read waiting for an event the client has not set holds its bytes on the server.
  auto gate = user_event(first);
  cl_event gate_handle = gate.get();
  std::vector<std::uint8_t> back(most), more(rest), written(rest, 7);
  cl_event read = nullptr, refused_read = nullptr, refused_write = nullptr;
  ASSERT_CL(clEnqueueReadBuffer(first.queue, buffer, CL_FALSE, 0, most, back.data(), 1,
                                &gate_handle, &read));
  event_ref read_ref(read);
  // More reads or non-blocking writes behind it would pass the quota: they fail.
  ASSERT_CL(clEnqueueReadBuffer(first.queue, buffer, CL_FALSE, 0, rest, more.data(), 1,
                                &gate_handle, &refused_read));
  event_ref refused_read_ref(refused_read);
  ASSERT_CL(clEnqueueWriteBuffer(first.queue, buffer, CL_FALSE, 0, rest, written.data(), 1,
                                 &gate_handle, &refused_write));
  event_ref refused_write_ref(refused_write);
  // Meanwhile the other session holds as much of its own quota, and is served.
  {
    auto other = make_buffer(second.context, most, CL_MEM_COPY_HOST_PTR, pattern.data());
    auto other_gate = user_event(second);
    cl_event other_gate_handle = other_gate.get();
    std::vector<std::uint8_t> other_back(most);
    cl_event other_read = nullptr;
    ASSERT_CL(clEnqueueReadBuffer(second.queue, other, CL_FALSE, 0, most, other_back.data(), 1,
                                  &other_gate_handle, &other_read));
    event_ref other_read_ref(other_read);
    ASSERT_CL(clSetUserEventStatus(other_gate, CL_COMPLETE));
    ASSERT_CL(clWaitForEvents(1, &other_read));
    EXPECT_EQ(other_back, pattern);
  }
  ASSERT_CL(clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL(clWaitForEvents(1, &read));
  EXPECT_EQ(back, pattern);
  EXPECT_NE(clWaitForEvents(1, &refused_read), CL_SUCCESS);
  EXPECT_EQ(execution_status(refused_read), CL_OUT_OF_RESOURCES);
  EXPECT_NE(clWaitForEvents(1, &refused_write), CL_SUCCESS);
  EXPECT_EQ(execution_status(refused_write), CL_OUT_OF_RESOURCES);
  // The read's bytes are given back once it is over: the same transfers are served now.
  auto again = user_event(first);
  cl_event again_handle = again.get();
  cl_event events[2] = {};
  ASSERT_CL(clEnqueueReadBuffer(first.queue, buffer, CL_FALSE, 0, rest, more.data(), 1,
                                &again_handle, &events[0]));
  event_ref read_again_ref(events[0]);
  ASSERT_CL(clEnqueueWriteBuffer(first.queue, buffer, CL_FALSE, rest, most - rest, written.data(),
                                 1, &again_handle, &events[1]));
  event_ref write_again_ref(events[1]);
  ASSERT_CL(clSetUserEventStatus(again, CL_COMPLETE));
  ASSERT_CL(clWaitForEvents(2, events));
  EXPECT_TRUE(std::equal(more.begin(), more.end(), pattern.begin()));
  // The refused transfers were not waited for: their failure comes back once, at the next
  // clFinish, as any pipelined call's does.
  EXPECT_EQ(clFinish(first.queue), CL_OUT_OF_RESOURCES);
  EXPECT_CL(clFinish(first.queue));
}

TEST_F(remote_quota, objects_past_the_quota_fail_that_creation_only) {
  std::vector<event_ref> events;
  cl_int status = CL_SUCCESS;
  while (events.size() <= object_quota) {
    cl_event made = clCreateUserEvent(first.context, &status);
    if (status != CL_SUCCESS) break;
    events.emplace_back(made);
  }
  EXPECT_EQ(status, CL_OUT_OF_RESOURCES) << "after " << events.size() << " user events";
  // The session's platform, device, context and queue count too.
  EXPECT_LT(events.size(), object_quota);
  EXPECT_EQ(create_status(first.context, 64), CL_OUT_OF_RESOURCES);
  // The other session is not bound by it.
  std::vector<event_ref> others;
  for (std::size_t i = 0; i < events.size() / 2; ++i) others.push_back(user_event(second));
  // A released object counts no more.
  for (auto& event : events) ASSERT_CL(clSetUserEventStatus(event, CL_COMPLETE));
  events.pop_back();
  cl_event made = clCreateUserEvent(first.context, &status);
  EXPECT_EQ(status, CL_SUCCESS) << cl_error_name(status);
  if (status == CL_SUCCESS) events.emplace_back(made);
  events.clear();
  EXPECT_EQ(create_status(first.context, 64), CL_SUCCESS);
}

}  // namespace
}  // namespace troupe::remote_test
