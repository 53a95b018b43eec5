// Wrong image regions (CTS-style): origins and regions past an image, regions the image type
// has no room for, host pitches too small, copies past a buffer, between formats or within one
// image overlapping, fail through the driver at the call, with OpenCL's error and the local
// device's.
#include <CL/cl.h>

#include <functional>
#include <string>
#include <vector>

#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "image_fixture.hpp"
#include "image_shapes.hpp"
#include "refusals.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

class remote_image_range : public remote_image {};

using triple = std::vector<std::size_t>;

// One side's images and buffer that the wrong calls name: one image of each shape (indexed as
// `shapes`), a 2D image of another format, and a buffer of 256 bytes.
struct targets {
  std::vector<mem_ref> images;
  mem_ref other_format;
  mem_ref buffer;
};

targets make_targets(const side& s) {
  targets made;
  for (const auto& shape : shapes) {
    auto pixels = numbered_pixels(shape);
    made.images.push_back(make_image(s.context, shape, pixels.data()));
  }
  auto pixels = numbered_pixels(shapes[2]);
  made.other_format =
      make_image(s.context, shapes[2], pixels.data(), cl_image_format{CL_RGBA, CL_UNORM_INT8});
  std::vector<unsigned char> zeros(256, 0);
  made.buffer = make_buffer(s.context, zeros.size(), CL_MEM_COPY_HOST_PTR, zeros.data());
  return made;
}

enum shape_index { one_d = 0, one_d_array = 1, two_d = 2, two_d_array = 3, three_d = 4 };

// A wrong call on one side's targets: returns what the call returned.
struct bad_call {
  const char* name;
  std::function<cl_int(const side&, targets&)> call;
  cl_int expected = CL_INVALID_VALUE;  ///< OpenCL's error
};

std::vector<unsigned char> host(1 << 16, 0);

cl_int read(const side& s, cl_mem image, triple origin, triple region, std::size_t row = 0,
            std::size_t slice = 0, cl_bool blocking = CL_FALSE) {
  return clEnqueueReadImage(s.queue, image, blocking, origin.data(), region.data(), row, slice,
                            host.data(), 0, nullptr, nullptr);
}

cl_int write(const side& s, cl_mem image, triple origin, triple region, std::size_t row = 0,
             std::size_t slice = 0) {
  return clEnqueueWriteImage(s.queue, image, CL_FALSE, origin.data(), region.data(), row, slice,
                             host.data(), 0, nullptr, nullptr);
}

cl_int fill(const side& s, cl_mem image, triple origin, triple region) {
  const cl_uint color[4] = {1, 2, 3, 4};
  return clEnqueueFillImage(s.queue, image, color, origin.data(), region.data(), 0, nullptr,
                            nullptr);
}

cl_int copy(const side& s, cl_mem from, cl_mem to, triple from_origin, triple to_origin,
            triple region) {
  return clEnqueueCopyImage(s.queue, from, to, from_origin.data(), to_origin.data(), region.data(),
                            0, nullptr, nullptr);
}

const bad_call calls[] = {
    {"read past the width",
     [](auto& s, auto& t) {
       return read(s, t.images[two_d], {25, 0, 0}, {5, 1, 1});
     }},
    {"read past the height",
     [](auto& s, auto& t) {
       return read(s, t.images[two_d], {0, 10, 0}, {4, 2, 1});
     }},
    {"read a 2D image two slices deep",
     [](auto& s, auto& t) {
       return read(s, t.images[two_d], {0, 0, 0}, {4, 2, 2});
     }},
    {"read a 2D image at slice 1",
     [](auto& s, auto& t) {
       return read(s, t.images[two_d], {0, 0, 1}, {4, 2, 1});
     }},
    {"read a 1D image at row 1",
     [](auto& s, auto& t) {
       return read(s, t.images[one_d], {0, 1, 0}, {4, 1, 1});
     }},
    {"blocking read past the depth",
     [](auto& s, auto& t) {
       return read(s, t.images[three_d], {0, 0, 4}, {4, 2, 2}, 0, 0, CL_TRUE);
     }},
    {"write past the depth",
     [](auto& s, auto& t) {
       return write(s, t.images[three_d], {1, 1, 1}, {4, 4, 5});
     }},
    {"fill past the width",
     [](auto& s, auto& t) {
       return fill(s, t.images[two_d], {20, 0, 0}, {10, 2, 1});
     }},
    {"copy past the destination",
     [](auto& s, auto& t) {
       return copy(s, t.images[two_d], t.images[three_d], {0, 0, 0}, {0, 0, 4}, {4, 4, 2});
     }},
    {"copy past the source",
     [](auto& s, auto& t) {
       return copy(s, t.images[two_d], t.images[two_d_array], {0, 8, 0}, {0, 0, 0}, {4, 4, 1});
     }},
    {"copy between formats",
     [](auto& s, auto& t) {
       return copy(s, t.images[two_d], t.other_format, {0, 0, 0}, {0, 0, 0}, {4, 4, 1});
     },
     CL_IMAGE_FORMAT_MISMATCH},
    {"copy within an image, overlapping",
     [](auto& s, auto& t) {
       return copy(s, t.images[two_d], t.images[two_d], {0, 0, 0}, {2, 1, 0}, {4, 4, 1});
     },
     CL_MEM_COPY_OVERLAP},
    {"copy an image to past the buffer's end",
     [](auto& s, auto& t) {
       const triple origin{0, 0, 0}, region{8, 4, 1};  // 128 bytes at 192
       return clEnqueueCopyImageToBuffer(s.queue, t.images[two_d], t.buffer, origin.data(),
                                         region.data(), 192, 0, nullptr, nullptr);
     }},
    {"copy an image region past the image to a buffer",
     [](auto& s, auto& t) {
       const triple origin{0, 0, 0}, region{30, 1, 1};
       return clEnqueueCopyImageToBuffer(s.queue, t.images[one_d], t.buffer, origin.data(),
                                         region.data(), 0, 0, nullptr, nullptr);
     }},
    {"copy from past the buffer's end to an image",
     [](auto& s, auto& t) {
       const triple origin{0, 0, 0}, region{4, 4, 1};  // 64 bytes at 200
       return clEnqueueCopyBufferToImage(s.queue, t.buffer, t.images[two_d], 200, origin.data(),
                                         region.data(), 0, nullptr, nullptr);
     }},
    {"copy a buffer to past the image",
     [](auto& s, auto& t) {
       const triple origin{0, 3, 0}, region{4, 3, 1};
       return clEnqueueCopyBufferToImage(s.queue, t.buffer, t.images[one_d_array], 0, origin.data(),
                                         region.data(), 0, nullptr, nullptr);
     }},
};

// Calls PoCL lets past although OpenCL 1.2 refuses them with CL_INVALID_VALUE (writes past
// an array's last image would write past the image in the server): the driver refuses them.
const bad_call lax_calls[] = {
    {"read an empty region",
     [](auto& s, auto& t) {
       return read(s, t.images[two_d], {0, 0, 0}, {0, 1, 1});
     }},
    {"read with a row pitch under the region",
     [](auto& s, auto& t) {
       return read(s, t.images[two_d], {0, 0, 0}, {8, 2, 1}, 16);
     }},
    {"write past the images of a 1D array",
     [](auto& s, auto& t) {
       return write(s, t.images[one_d_array], {0, 4, 0}, {1, 2, 1});
     }},
    {"write past the images of a 2D array",
     [](auto& s, auto& t) {
       return write(s, t.images[two_d_array], {0, 0, 3}, {4, 4, 3});
     }},
    {"write with a slice pitch under the region",
     [](auto& s, auto& t) {
       return write(s, t.images[three_d], {0, 0, 0}, {4, 4, 2}, 16, 32);
     }},
    {"fill an empty region",
     [](auto& s, auto& t) {
       return fill(s, t.images[three_d], {0, 0, 0}, {4, 4, 0});
     }},
    {"map past the height",
     [](auto& s, auto& t) {
       const triple origin{0, 8, 0}, region{4, 4, 1};
       std::size_t row = 0;
       cl_int status = CL_SUCCESS;
       void* mapped =
           clEnqueueMapImage(s.queue, t.images[two_d], CL_TRUE, CL_MAP_READ, origin.data(),
                             region.data(), &row, nullptr, 0, nullptr, nullptr, &status);
       if (mapped != nullptr)
         clEnqueueUnmapMemObject(s.queue, t.images[two_d], mapped, 0, nullptr, nullptr);
       return status;
     }},
};

TEST_F(remote_image_range, wrong_regions_fail_at_the_call_as_natively) {
  auto on_local = make_targets(local), on_remote = make_targets(remote);
  if (HasFailure()) return;
  for (const auto& bad : calls) {
    SCOPED_TRACE(bad.name);
    const cl_int native = bad.call(local, on_local);
    expect_refused(bad.call(remote, on_remote), native, bad.expected);
    // Refused at the call, as natively: nothing is left to fail later.
    EXPECT_EQ(std::string(cl_error_name(clFinish(remote.queue))), "CL_SUCCESS");
  }
  for (const auto& bad : lax_calls) {
    SCOPED_TRACE(bad.name);
    EXPECT_EQ(std::string(cl_error_name(bad.call(remote, on_remote))), "CL_INVALID_VALUE");
    EXPECT_EQ(std::string(cl_error_name(clFinish(remote.queue))), "CL_SUCCESS");
  }
  // Nothing was written: every image still holds its pixels.
  for (std::size_t i = 0; i < std::size(shapes); ++i) {
    SCOPED_TRACE(shapes[i].name);
    std::vector<unsigned char> back(numbered_pixels(shapes[i]).size());
    const std::size_t origin[3] = {0, 0, 0};
    ASSERT_CL(clEnqueueReadImage(remote.queue, on_remote.images[i], CL_TRUE, origin,
                                 shapes[i].extent, 0, 0, back.data(), 0, nullptr, nullptr));
    EXPECT_TRUE(back == numbered_pixels(shapes[i]));
  }
}

}  // namespace
}  // namespace troupe::remote_test
