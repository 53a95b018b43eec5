// Rectangle reads, writes and copies of buffers (CTS-style): 1D, 2D and 3D regions at non-zero
// origins, pitches given and left 0, against a CPU reference and the local PoCL; overlapping
// copies and out-of-range rectangles fail with the local PoCL's error, at the call.
#include <CL/cl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "buffer_bytes.hpp"
#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "refusals.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

using triple = std::array<std::size_t, 3>;

/// One rectangle: where it lies in the buffer and in host memory, and the pitches of each,
/// 0 meaning "packed", as OpenCL defaults them.
struct rect_case {
  const char* name;
  triple buffer_origin, host_origin, region;
  std::size_t buffer_row, buffer_slice, host_row, host_slice;
};

constexpr rect_case cases[] = {
    {"1D at an offset", {5, 0, 0}, {3, 0, 0}, {17, 1, 1}, 0, 0, 0, 0},
    {"1D with pitches given", {9, 0, 0}, {1, 0, 0}, {30, 1, 1}, 64, 64, 40, 40},
    {"2D with pitches", {3, 2, 0}, {1, 1, 0}, {5, 4, 1}, 16, 0, 10, 0},
    {"2D packed", {0, 3, 0}, {0, 2, 0}, {7, 3, 1}, 0, 0, 0, 0},
    {"3D with every pitch", {3, 2, 1}, {1, 1, 1}, {5, 4, 2}, 16, 192, 10, 60},
    {"3D with slice pitches defaulted", {2, 1, 2}, {0, 1, 1}, {6, 3, 2}, 11, 0, 8, 0},
    {"3D packed", {1, 1, 1}, {1, 0, 1}, {4, 3, 3}, 0, 0, 0, 0},
};

// The pitches OpenCL uses for a rectangle's layout when given 0.
std::size_t row_of(std::size_t pitch, const triple& region) {
  return pitch != 0 ? pitch : region[0];
}
std::size_t slice_of(std::size_t pitch, std::size_t row, const triple& region) {
  return pitch != 0 ? pitch : row * region[1];
}
// Bytes a layout needs to hold a rectangle at `origin`.
std::size_t span(const triple& origin, const triple& region, std::size_t row, std::size_t slice) {
  return (origin[2] + region[2] - 1) * slice + (origin[1] + region[1] - 1) * row + origin[0] +
         region[0];
}

class remote_buffer_rect : public remote_test {};

TEST_F(remote_buffer_rect, reads_writes_and_copies_match_the_cpu_and_the_local_device) {
  for (const auto& c : cases) {
    const std::size_t buffer_row = row_of(c.buffer_row, c.region);
    const std::size_t buffer_slice = slice_of(c.buffer_slice, buffer_row, c.region);
    const std::size_t host_row = row_of(c.host_row, c.region);
    const std::size_t host_slice = slice_of(c.host_slice, host_row, c.region);
    const std::size_t size = span(c.buffer_origin, c.region, buffer_row, buffer_slice) + 13;
    const std::size_t host_size = span(c.host_origin, c.region, host_row, host_slice) + 7;
    // The copy's destination: the same rectangle, one row and one byte further.
    const triple to{c.buffer_origin[0] + 1, c.buffer_origin[1] + 1, c.buffer_origin[2]};
    const std::size_t second_size = span(to, c.region, buffer_row, buffer_slice) + 5;
    const auto initial = random_bytes(size, 41), host = random_bytes(host_size, 42);

    auto written = initial;
    copy_rect(host.data(), c.host_origin.data(), host_row, host_slice, written.data(),
              c.buffer_origin.data(), buffer_row, buffer_slice, c.region.data());
    std::vector<unsigned char> read_reference(host_size, 0xee);
    copy_rect(written.data(), c.buffer_origin.data(), buffer_row, buffer_slice,
              read_reference.data(), c.host_origin.data(), host_row, host_slice, c.region.data());
    std::vector<unsigned char> copied(second_size, 0);
    copy_rect(written.data(), c.buffer_origin.data(), buffer_row, buffer_slice, copied.data(),
              to.data(), buffer_row, buffer_slice, c.region.data());

    check_case(c.name, [&](side& s) -> std::string {
      auto buffer = make_buffer(s.context, size, CL_MEM_COPY_HOST_PTR,
                                const_cast<unsigned char*>(initial.data()));
      std::vector<unsigned char> zeros(second_size, 0);
      auto second = make_buffer(s.context, second_size, CL_MEM_COPY_HOST_PTR, zeros.data());
      for (cl_bool blocking : {CL_FALSE, CL_TRUE}) {
        RETURN_CL_FAILURE(clEnqueueWriteBufferRect(
            s.queue, buffer, blocking, c.buffer_origin.data(), c.host_origin.data(),
            c.region.data(), c.buffer_row, c.buffer_slice, c.host_row, c.host_slice, host.data(), 0,
            nullptr, nullptr));
        std::vector<unsigned char> back(host_size, 0xee);
        RETURN_CL_FAILURE(clEnqueueReadBufferRect(s.queue, buffer, blocking, c.buffer_origin.data(),
                                                  c.host_origin.data(), c.region.data(),
                                                  c.buffer_row, c.buffer_slice, c.host_row,
                                                  c.host_slice, back.data(), 0, nullptr, nullptr));
        RETURN_CL_FAILURE(clFinish(s.queue));
        if (back != read_reference) return "read back wrong, blocking " + std::to_string(blocking);
      }
      RETURN_CL_FAILURE(clEnqueueCopyBufferRect(
          s.queue, buffer, second, c.buffer_origin.data(), to.data(), c.region.data(), c.buffer_row,
          c.buffer_slice, c.buffer_row, c.buffer_slice, 0, nullptr, nullptr));
      RETURN_CL_FAILURE(clFinish(s.queue));  // the driver reports a copy that failed here
      std::vector<unsigned char> whole(size), second_whole(second_size);
      RETURN_CL_FAILURE(clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, size, whole.data(), 0,
                                            nullptr, nullptr));
      RETURN_CL_FAILURE(clEnqueueReadBuffer(s.queue, second, CL_TRUE, 0, second_size,
                                            second_whole.data(), 0, nullptr, nullptr));
      if (whole != written) return "the buffer after the writes is wrong";
      if (second_whole != copied) return "the copy is wrong";
      return "";
    });
  }
}

TEST_F(remote_buffer_rect, copies_within_one_buffer_that_overlap_are_refused_as_natively) {
  // A 16 x 8 x 2 buffer. Two boxes of one buffer that share a byte overlap; side by side they
  // do not, and the copy is made.
  const std::size_t row = 16, slice = 128, size = 256;
  const triple region{4, 3, 1}, from{2, 1, 0};
  const triple overlapping[] = {{4, 2, 0}, {2, 1, 0}, {5, 3, 0}};
  const triple apart[] = {{6, 1, 0}, {2, 4, 0}, {2, 1, 1}};
  const auto initial = random_bytes(size, 51);
  for (side* s : checked_sides()) {
    SCOPED_TRACE(s->name);
    auto buffer = make_buffer(s->context, size, CL_MEM_COPY_HOST_PTR,
                              const_cast<unsigned char*>(initial.data()));
    for (const auto& to : overlapping) {
      EXPECT_EQ(clEnqueueCopyBufferRect(s->queue, buffer, buffer, from.data(), to.data(),
                                        region.data(), row, slice, row, slice, 0, nullptr, nullptr),
                CL_MEM_COPY_OVERLAP)
          << "to (" << to[0] << ", " << to[1] << ", " << to[2] << ")";
    }
    auto expected = initial;
    for (const auto& to : apart) {
      ASSERT_CL(clEnqueueCopyBufferRect(s->queue, buffer, buffer, from.data(), to.data(),
                                        region.data(), row, slice, row, slice, 0, nullptr,
                                        nullptr));
      copy_rect(expected.data(), from.data(), row, slice, expected.data(), to.data(), row, slice,
                region.data());
    }
    EXPECT_CL(clFinish(s->queue));
    EXPECT_TRUE(read_all(*s, buffer, size) == expected);
  }
}

// A rectangle call that is wrong, made on one side: returns what the call returned.
struct bad_call {
  const char* name;
  std::function<cl_int(const side&, cl_mem, std::vector<unsigned char>&)> call;
};

cl_int read_rect(const side& s, cl_mem buffer, std::vector<unsigned char>& host, triple origin,
                 triple region, std::size_t row, std::size_t slice, std::size_t host_row = 0,
                 std::size_t host_slice = 0, cl_bool blocking = CL_FALSE) {
  const triple zero{0, 0, 0};
  return clEnqueueReadBufferRect(s.queue, buffer, blocking, origin.data(), zero.data(),
                                 region.data(), row, slice, host_row, host_slice, host.data(), 0,
                                 nullptr, nullptr);
}

cl_int write_rect(const side& s, cl_mem buffer, std::vector<unsigned char>& host, triple origin,
                  triple region, std::size_t row, std::size_t slice, std::size_t host_row = 0,
                  std::size_t host_slice = 0, cl_bool blocking = CL_FALSE) {
  const triple zero{0, 0, 0};
  return clEnqueueWriteBufferRect(s.queue, buffer, blocking, origin.data(), zero.data(),
                                  region.data(), row, slice, host_row, host_slice, host.data(), 0,
                                  nullptr, nullptr);
}

cl_int copy_to_self(const side& s, cl_mem buffer, triple from, triple to, triple region,
                    std::size_t row, std::size_t slice) {
  return clEnqueueCopyBufferRect(s.queue, buffer, buffer, from.data(), to.data(), region.data(),
                                 row, slice, row, slice, 0, nullptr, nullptr);
}

TEST_F(remote_buffer_rect, out_of_range_rectangles_fail_at_the_call_as_natively) {
  // A 256-byte buffer seen as 16 x 8 x 2.
  const std::size_t size = 256;
  const bad_call calls[] = {
      {"read past the end",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 0, 1}, {16, 8, 2}, 16, 128);
       }},
      {"read row pitch under the region",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 0, 0}, {8, 2, 1}, 4, 0);
       }},
      {"read slice pitch not a multiple",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 0, 0}, {4, 2, 2}, 16, 40);
       }},
      {"read host row pitch under the region",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 0, 0}, {8, 2, 1}, 16, 128, 4, 0);
       }},
      {"read host slice pitch under the region",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 0, 0}, {8, 2, 2}, 16, 128, 8, 8);
       }},
      {"read empty region",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 0, 0}, {0, 2, 1}, 16, 128);
       }},
      {"blocking read past the end",
       [](auto& s, cl_mem b, auto& h) {
         return read_rect(s, b, h, {0, 7, 1}, {16, 2, 1}, 16, 128, 0, 0, CL_TRUE);
       }},
      {"write past the end",
       [](auto& s, cl_mem b, auto& h) {
         return write_rect(s, b, h, {1, 0, 1}, {16, 8, 1}, 16, 128);
       }},
      {"write row pitch under the region",
       [](auto& s, cl_mem b, auto& h) {
         return write_rect(s, b, h, {0, 0, 0}, {8, 2, 1}, 4, 0);
       }},
      {"write host slice pitch not a multiple",
       [](auto& s, cl_mem b, auto& h) {
         return write_rect(s, b, h, {0, 0, 0}, {4, 2, 2}, 16, 128, 8, 20);
       }},
      {"blocking write past the end",
       [](auto& s, cl_mem b, auto& h) {
         return write_rect(s, b, h, {0, 0, 2}, {4, 2, 1}, 16, 128, 0, 0, CL_TRUE);
       }},
      {"copy source past the end",
       [](auto& s, cl_mem b, auto&) {
         return copy_to_self(s, b, {0, 6, 1}, {0, 0, 0}, {4, 4, 1}, 16, 128);
       }},
      {"copy destination past the end",
       [](auto& s, cl_mem b, auto&) {
         return copy_to_self(s, b, {0, 0, 0}, {14, 7, 1}, {4, 2, 1}, 16, 128);
       }},
      {"copy row pitch under the region",
       [](auto& s, cl_mem b, auto&) {
         return copy_to_self(s, b, {0, 0, 0}, {0, 0, 1}, {8, 2, 1}, 4, 128);
       }},
      {"copy empty region",
       [](auto& s, cl_mem b, auto&) {
         return copy_to_self(s, b, {0, 0, 0}, {0, 0, 1}, {4, 0, 1}, 16, 128);
       }},
  };
  std::vector<unsigned char> zeros(size, 0);
  auto local_buffer = make_buffer(local.context, size, CL_MEM_COPY_HOST_PTR, zeros.data());
  auto remote_buffer = make_buffer(remote.context, size, CL_MEM_COPY_HOST_PTR, zeros.data());
  for (const auto& bad : calls) {
    SCOPED_TRACE(bad.name);
    std::vector<unsigned char> local_host(4096, 0), remote_host(4096, 0);
    const cl_int native = bad.call(local, local_buffer, local_host);
    expect_refused(bad.call(remote, remote_buffer, remote_host), native, CL_INVALID_VALUE);
    // Refused at the call, as natively: nothing is left to fail later.
    EXPECT_EQ(std::string(cl_error_name(clFinish(remote.queue))), "CL_SUCCESS");
  }
  // Sizes whose products wrap around a size_t are refused, not wrapped into a small rectangle
  // (the driver only: a native device may not survive them).
  std::vector<unsigned char> host(4096, 0);
  EXPECT_EQ(write_rect(remote, remote_buffer, host, {0, 0, 0},
                       {std::size_t{1} << 33, std::size_t{1} << 31, 1}, 0, 0),
            CL_INVALID_VALUE);
  EXPECT_EQ(read_rect(remote, remote_buffer, host, {0, SIZE_MAX, 0}, {16, 2, 1}, 16, 128),
            CL_INVALID_VALUE);
  EXPECT_TRUE(read_all(remote, remote_buffer, size) == zeros);
}

}  // namespace
}  // namespace troupe::remote_test
