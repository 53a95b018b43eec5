// Maps and fills of buffers (CTS-style), against a CPU reference and the local PoCL: maps at
// offsets, two maps of one buffer at once unmapped in either order, maps of a sub-buffer,
// buffers with and without a host pointer; wrong maps and fills fail as natively, at the call.
#include <CL/cl.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "buffer_bytes.hpp"
#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "refusals.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

class remote_buffer_map : public remote_test {};

constexpr std::size_t buffer_size = 8192;

unsigned char* map(const side& s, cl_mem buffer, cl_map_flags flags, std::size_t offset,
                   std::size_t size, cl_bool blocking = CL_TRUE) {
  cl_int status = CL_SUCCESS;
  event_ref mapped;
  auto* host = static_cast<unsigned char*>(clEnqueueMapBuffer(
      s.queue, buffer, blocking, flags, offset, size, 0, nullptr, mapped.out(), &status));
  EXPECT_EQ(std::string(cl_error_name(status)), "CL_SUCCESS")
      << "map of " << size << " bytes at " << offset;
  if (status == CL_SUCCESS && !blocking) EXPECT_CL(clWaitForEvents(1, mapped.ptr()));
  return host;
}

// Buffers made with a host pointer of their own (CL_MEM_USE_HOST_PTR) and without.
struct made_buffer {
  std::vector<unsigned char> host;  // the host pointer's memory, when used
  mem_ref buffer;
};
made_buffer make_mapped_buffer(const side& s, bool use_host,
                               const std::vector<unsigned char>& from) {
  made_buffer made;
  made.host = from;
  made.buffer =
      make_buffer(s.context, from.size(), use_host ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR,
                  made.host.data());
  return made;
}

TEST_F(remote_buffer_map, maps_at_offsets_read_write_and_invalidate_as_the_cpu_says) {
  const auto initial = random_bytes(buffer_size, 61);
  auto reference = initial;
  for (std::size_t i = 0; i < 300; ++i) reference[1001 + i] ^= 0x5a;
  for (std::size_t i = 0; i < 256; ++i) reference[4096 + i] = static_cast<unsigned char>(i * 3);
  for (bool use_host : {false, true}) {
    for (side* s : checked_sides()) {
      SCOPED_TRACE(s->name + (use_host ? ", host pointer" : ""));
      auto made = make_mapped_buffer(*s, use_host, initial);
      for (cl_bool blocking : {CL_TRUE, CL_FALSE}) {
        auto* read = map(*s, made.buffer, CL_MAP_READ, 17, 333, blocking);
        ASSERT_NE(read, nullptr);
        EXPECT_TRUE(std::equal(read, read + 333, initial.begin() + 17));
        ASSERT_CL(clEnqueueUnmapMemObject(s->queue, made.buffer, read, 0, nullptr, nullptr));
      }
      auto* write = map(*s, made.buffer, CL_MAP_WRITE, 1001, 300, CL_FALSE);
      ASSERT_NE(write, nullptr);
      for (std::size_t i = 0; i < 300; ++i) write[i] ^= 0x5a;  // a write map holds the bytes
      ASSERT_CL(clEnqueueUnmapMemObject(s->queue, made.buffer, write, 0, nullptr, nullptr));
      auto* fresh = map(*s, made.buffer, CL_MAP_WRITE_INVALIDATE_REGION, 4096, 256);
      ASSERT_NE(fresh, nullptr);
      for (std::size_t i = 0; i < 256; ++i) fresh[i] = static_cast<unsigned char>(i * 3);
      ASSERT_CL(clEnqueueUnmapMemObject(s->queue, made.buffer, fresh, 0, nullptr, nullptr));
      ASSERT_CL(clFinish(s->queue));
      EXPECT_TRUE(read_all(*s, made.buffer, buffer_size) == reference);
    }
  }
}

TEST_F(remote_buffer_map, two_maps_of_one_buffer_at_once_unmap_in_either_order) {
  const auto initial = random_bytes(buffer_size, 62);
  auto reference = initial;
  for (std::size_t i = 0; i < 512; ++i) reference[2048 + i] = static_cast<unsigned char>(~i);
  for (bool use_host : {false, true}) {
    for (bool last_first : {false, true}) {
      for (side* s : checked_sides()) {
        SCOPED_TRACE(s->name + (use_host ? ", host pointer" : "") +
                     (last_first ? ", last unmapped first" : ""));
        auto made = make_mapped_buffer(*s, use_host, initial);
        // Two reads of the same bytes and a write elsewhere, all mapped at once.
        auto* first = map(*s, made.buffer, CL_MAP_READ, 64, 512);
        auto* again = map(*s, made.buffer, CL_MAP_READ, 64, 512);
        auto* write = map(*s, made.buffer, CL_MAP_WRITE, 2048, 512);
        ASSERT_TRUE(first != nullptr && again != nullptr && write != nullptr);
        EXPECT_EQ(info<cl_uint>(clGetMemObjectInfo, made.buffer.get(), CL_MEM_MAP_COUNT), 3u);
        EXPECT_TRUE(std::equal(first, first + 512, initial.begin() + 64));
        EXPECT_TRUE(std::equal(again, again + 512, initial.begin() + 64));
        for (std::size_t i = 0; i < 512; ++i) write[i] = static_cast<unsigned char>(~i);
        std::vector<void*> order{first, again, write};
        if (last_first) std::reverse(order.begin(), order.end());
        for (void* mapped : order) {
          EXPECT_CL(clEnqueueUnmapMemObject(s->queue, made.buffer, mapped, 0, nullptr, nullptr));
        }
        // Each map is unmapped once: a fourth unmap finds none.
        EXPECT_EQ(std::string(cl_error_name(
                      clEnqueueUnmapMemObject(s->queue, made.buffer, first, 0, nullptr, nullptr))),
                  "CL_INVALID_VALUE");
        ASSERT_CL(clFinish(s->queue));
        EXPECT_TRUE(read_all(*s, made.buffer, buffer_size) == reference);
      }
    }
  }
}

TEST_F(remote_buffer_map, a_sub_buffer_maps_its_part_of_the_parent) {
  const auto align =
      info<cl_uint>(clGetDeviceInfo, remote.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  ASSERT_EQ(align, info<cl_uint>(clGetDeviceInfo, local.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
  const std::size_t size = 4 * align;
  const auto initial = random_bytes(size, 63);
  auto reference = initial;
  for (std::size_t i = 0; i < 100; ++i) reference[align + 8 + i] += 1;
  for (bool use_host : {false, true}) {
    for (side* s : checked_sides()) {
      SCOPED_TRACE(s->name + (use_host ? ", host pointer" : ""));
      auto made = make_mapped_buffer(*s, use_host, initial);
      cl_buffer_region region{align, 2 * align};
      cl_int status = CL_SUCCESS;
      mem_ref sub(clCreateSubBuffer(made.buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                    &region, &status));
      ASSERT_CL(status);
      auto* mapped = map(*s, sub, CL_MAP_READ | CL_MAP_WRITE, 8, 100);
      ASSERT_NE(mapped, nullptr);
      EXPECT_TRUE(std::equal(mapped, mapped + 100, initial.begin() + align + 8));
      for (std::size_t i = 0; i < 100; ++i) mapped[i] += 1;
      ASSERT_CL(clEnqueueUnmapMemObject(s->queue, sub, mapped, 0, nullptr, nullptr));
      ASSERT_CL(clFinish(s->queue));
      EXPECT_TRUE(read_all(*s, made.buffer, size) == reference);
    }
  }
}

TEST_F(remote_buffer_map, a_map_to_read_and_invalidate_reads_and_keeps_the_bytes) {
  // OpenCL forbids the pair; PoCL accepts it and reads, and so does the driver: the buffer
  // keeps its bytes. A local device that refuses the pair is left out of the comparison.
  const auto initial = random_bytes(buffer_size, 65);
  for (side* s : checked_sides()) {
    SCOPED_TRACE(s->name);
    auto made = make_mapped_buffer(*s, false, initial);
    cl_int status = CL_SUCCESS;
    auto* mapped = static_cast<unsigned char*>(clEnqueueMapBuffer(
        s->queue, made.buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 100, 600, 0,
        nullptr, nullptr, &status));
    if (s == &local && status != CL_SUCCESS) continue;
    ASSERT_CL(status);
    EXPECT_TRUE(std::equal(mapped, mapped + 600, initial.begin() + 100));
    ASSERT_CL(clEnqueueUnmapMemObject(s->queue, made.buffer, mapped, 0, nullptr, nullptr));
    ASSERT_CL(clFinish(s->queue));
    EXPECT_TRUE(read_all(*s, made.buffer, buffer_size) == initial);
  }
}

// A call that is wrong, made on one side's buffer: returns what the call returned.
struct bad_call {
  const char* name;
  std::function<cl_int(const side&, cl_mem)> call;
};

cl_int map_status(const side& s, cl_mem buffer, cl_map_flags flags, std::size_t offset,
                  std::size_t size) {
  cl_int status = CL_SUCCESS;
  void* host = clEnqueueMapBuffer(s.queue, buffer, CL_FALSE, flags, offset, size, 0, nullptr,
                                  nullptr, &status);
  if (host != nullptr) clEnqueueUnmapMemObject(s.queue, buffer, host, 0, nullptr, nullptr);
  return status;
}

cl_int fill_status(const side& s, cl_mem buffer, std::size_t pattern_size, std::size_t offset,
                   std::size_t size) {
  const std::vector<unsigned char> pattern(256, 7);
  return clEnqueueFillBuffer(s.queue, buffer, pattern.data(), pattern_size, offset, size, 0,
                             nullptr, nullptr);
}

TEST_F(remote_buffer_map, wrong_maps_and_fills_fail_at_the_call_as_natively) {
  const bad_call calls[] = {
      {"map past the end",
       [](auto& s, cl_mem b) { return map_status(s, b, CL_MAP_READ, 8000, 200); }},
      {"map of nothing", [](auto& s, cl_mem b) { return map_status(s, b, CL_MAP_READ, 0, 0); }},
      {"fill pattern of 3 bytes", [](auto& s, cl_mem b) { return fill_status(s, b, 3, 0, 96); }},
      {"fill pattern of 256 bytes",
       [](auto& s, cl_mem b) { return fill_status(s, b, 256, 0, 512); }},
      {"fill offset off the pattern",
       [](auto& s, cl_mem b) { return fill_status(s, b, 8, 4, 64); }},
      {"fill size off the pattern", [](auto& s, cl_mem b) { return fill_status(s, b, 16, 0, 40); }},
      {"fill past the end", [](auto& s, cl_mem b) { return fill_status(s, b, 4, 8000, 256); }},
  };
  const std::vector<unsigned char> zeros(buffer_size, 0);
  auto local_buffer = make_mapped_buffer(local, false, zeros);
  auto remote_buffer = make_mapped_buffer(remote, false, zeros);
  for (const auto& bad : calls) {
    SCOPED_TRACE(bad.name);
    const cl_int native = bad.call(local, local_buffer.buffer);
    expect_refused(bad.call(remote, remote_buffer.buffer), native, CL_INVALID_VALUE);
    // Refused at the call, as natively: nothing is left to fail later.
    EXPECT_EQ(std::string(cl_error_name(clFinish(remote.queue))), "CL_SUCCESS");
  }
  EXPECT_TRUE(read_all(remote, remote_buffer.buffer, buffer_size) == zeros);
}

TEST_F(remote_buffer_map, fills_of_every_pattern_size_at_offsets_match_the_cpu) {
  const auto initial = random_bytes(buffer_size, 64);
  for (side* s : checked_sides()) {
    SCOPED_TRACE(s->name);
    auto reference = initial;
    auto made = make_mapped_buffer(*s, false, initial);
    for (std::size_t pattern_size = 1; pattern_size <= 128; pattern_size *= 2) {
      const auto pattern = random_bytes(pattern_size, 100 + static_cast<unsigned>(pattern_size));
      const std::size_t offset = pattern_size * 7, size = pattern_size * 9;
      ASSERT_CL(clEnqueueFillBuffer(s->queue, made.buffer, pattern.data(), pattern_size, offset,
                                    size, 0, nullptr, nullptr));
      for (std::size_t i = 0; i < size; ++i) reference[offset + i] = pattern[i % pattern_size];
    }
    EXPECT_TRUE(read_all(*s, made.buffer, buffer_size) == reference);
  }
}

}  // namespace
}  // namespace troupe::remote_test
