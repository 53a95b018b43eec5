// Image transfers of every image type (CTS-style), against a CPU reference and the local PoCL:
// reads and writes with host pitches, copies between images at different origins, copies
// between images and buffers, and fills of each channel type the device supports.
#include <CL/cl.h>

#include <cstring>
#include <string>
#include <vector>

#include "buffer_bytes.hpp"
#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "image_fixture.hpp"
#include "image_shapes.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

class remote_image_copy : public remote_image {};

// A box of a shape, in the region's terms: away from the corner where the shape allows.
struct box {
  std::size_t origin[3], region[3];
};
box inner_box(const image_shape& shape) {
  box inside{};
  for (int i = 0; i < 3; ++i) {
    const bool wide = shape.extent[i] > 2;
    inside.origin[i] = wide ? 1 : 0;
    inside.region[i] = wide ? shape.extent[i] - 2 : shape.extent[i];
  }
  inside.origin[0] = 2;
  inside.region[0] = 9;
  return inside;
}

// A pixel's offset in a packed image of `extent` (in the region's terms).
std::size_t packed(const std::size_t* extent, std::size_t x, std::size_t y, std::size_t z) {
  return ((z * extent[1] + y) * extent[0] + x) * pixel;
}

// A pixel's offset in host memory laid out with these pitches; a 1D array's images are its
// rows and its slices (see the test).
std::size_t pitched(cl_mem_object_type type, std::size_t row, std::size_t slice, std::size_t x,
                    std::size_t y, std::size_t z) {
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) return y * slice + x * pixel;
  return z * slice + y * row + x * pixel;
}

// Calls `each(x, y, z)` for every pixel of a region.
template <class Each>
void for_region(const std::size_t* region, Each each) {
  for (std::size_t z = 0; z < region[2]; ++z) {
    for (std::size_t y = 0; y < region[1]; ++y) {
      for (std::size_t x = 0; x < region[0]; ++x) each(x, y, z);
    }
  }
}

std::vector<unsigned char> read_image(const side& s, cl_mem image, const image_shape& shape) {
  std::vector<unsigned char> pixels(shape.extent[0] * shape.extent[1] * shape.extent[2] * pixel);
  const std::size_t origin[3] = {0, 0, 0};
  EXPECT_CL(clEnqueueReadImage(s.queue, image, CL_TRUE, origin, shape.extent, 0, 0, pixels.data(),
                               0, nullptr, nullptr));
  return pixels;
}

TEST_F(remote_image_copy, reads_and_writes_with_host_pitches_match_the_cpu_for_every_type) {
  for (const auto& shape : shapes) {
    SCOPED_TRACE(shape.name);
    const box inside = inner_box(shape);
    const bool one_d_array = shape.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    // Rows and slices with gaps; 1D and 2D images take no slice pitch. A 1D array's images
    // lie a row and a slice pitch apart at once: PoCL steps by the row pitch, OpenCL 1.2 says
    // by the slice pitch.
    const std::size_t row = inside.region[0] * pixel + 12;
    const std::size_t slice = !has_slices(shape.type) ? 0
                              : one_d_array           ? row
                                                      : row * inside.region[1] + 20;
    const std::size_t host_size = (one_d_array ? inside.region[1] : inside.region[2]) *
                                  (slice != 0 ? slice : row * inside.region[1]);
    const auto host = random_bytes(host_size, 71);
    auto reference = numbered_pixels(shape);
    std::vector<unsigned char> read_reference(host_size, 0xee);
    for_region(inside.region, [&](std::size_t x, std::size_t y, std::size_t z) {
      const std::size_t at =
          packed(shape.extent, inside.origin[0] + x, inside.origin[1] + y, inside.origin[2] + z);
      const std::size_t from = pitched(shape.type, row, slice, x, y, z);
      std::memcpy(reference.data() + at, host.data() + from, pixel);
      std::memcpy(read_reference.data() + from, host.data() + from, pixel);
    });
    for (side* s : checked_sides()) {
      SCOPED_TRACE(s->name);
      auto pixels = numbered_pixels(shape);
      auto image = make_image(s->context, shape, pixels.data());
      ASSERT_NE(image.get(), nullptr);
      ASSERT_CL(clEnqueueWriteImage(s->queue, image, CL_FALSE, inside.origin, inside.region, row,
                                    slice, host.data(), 0, nullptr, nullptr));
      std::vector<unsigned char> back(host_size, 0xee);
      ASSERT_CL(clEnqueueReadImage(s->queue, image, CL_FALSE, inside.origin, inside.region, row,
                                   slice, back.data(), 0, nullptr, nullptr));
      ASSERT_CL(clFinish(s->queue));
      EXPECT_TRUE(back == read_reference) << "the box read back with pitches";
      EXPECT_TRUE(read_image(*s, image, shape) == reference) << "the whole image";
    }
  }
}

TEST_F(remote_image_copy, copies_between_images_at_other_origins_match_the_cpu) {
  for (const auto& shape : shapes) {
    SCOPED_TRACE(shape.name);
    box from = inner_box(shape);
    // The destination's origin: back at the corner, and shorter by a pixel where it can be.
    const std::size_t to[3] = {0, 0, 0};
    from.region[0] -= 1;
    auto reference = std::vector<unsigned char>(numbered_pixels(shape).size(), 0);
    const auto source = numbered_pixels(shape);
    for_region(from.region, [&](std::size_t x, std::size_t y, std::size_t z) {
      std::memcpy(reference.data() + packed(shape.extent, to[0] + x, to[1] + y, to[2] + z),
                  source.data() + packed(shape.extent, from.origin[0] + x, from.origin[1] + y,
                                         from.origin[2] + z),
                  pixel);
    });
    for (side* s : checked_sides()) {
      SCOPED_TRACE(s->name);
      auto source_pixels = source;
      auto zeros = std::vector<unsigned char>(source.size(), 0);
      auto source_image = make_image(s->context, shape, source_pixels.data());
      auto target_image = make_image(s->context, shape, zeros.data());
      ASSERT_CL(clEnqueueCopyImage(s->queue, source_image, target_image, from.origin, to,
                                   from.region, 0, nullptr, nullptr));
      EXPECT_TRUE(read_image(*s, target_image, shape) == reference);
      EXPECT_TRUE(read_image(*s, source_image, shape) == source);
    }
  }
}

TEST_F(remote_image_copy, copies_between_images_and_buffers_match_the_cpu) {
  for (const auto& shape : shapes) {
    const box inside = inner_box(shape);
    const std::size_t offset = 12 * pixel;
    const std::size_t packed_size = inside.region[0] * inside.region[1] * inside.region[2] * pixel;
    const auto source = numbered_pixels(shape);
    const auto incoming = random_bytes(offset + packed_size, 72);
    // The image's box in the buffer, packed after `offset`; the buffer's bytes in the box.
    std::vector<unsigned char> buffer_reference(offset + packed_size, 0);
    auto image_reference = source;
    for_region(inside.region, [&](std::size_t x, std::size_t y, std::size_t z) {
      const std::size_t at =
          packed(shape.extent, inside.origin[0] + x, inside.origin[1] + y, inside.origin[2] + z);
      const std::size_t in_buffer = offset + packed(inside.region, x, y, z);
      std::memcpy(buffer_reference.data() + in_buffer, source.data() + at, pixel);
      std::memcpy(image_reference.data() + at, incoming.data() + in_buffer, pixel);
    });
    check_case(shape.name, [&](side& s) -> std::string {
      auto pixels = source;
      auto image = make_image(s.context, shape, pixels.data());
      std::vector<unsigned char> zeros(offset + packed_size, 0);
      auto target = make_buffer(s.context, zeros.size(), CL_MEM_COPY_HOST_PTR, zeros.data());
      auto from = incoming;
      auto buffer = make_buffer(s.context, from.size(), CL_MEM_COPY_HOST_PTR, from.data());
      RETURN_CL_FAILURE(clEnqueueCopyImageToBuffer(s.queue, image, target, inside.origin,
                                                   inside.region, offset, 0, nullptr, nullptr));
      RETURN_CL_FAILURE(clEnqueueCopyBufferToImage(s.queue, buffer, image, offset, inside.origin,
                                                   inside.region, 0, nullptr, nullptr));
      RETURN_CL_FAILURE(clFinish(s.queue));  // the driver reports a copy that failed here
      std::vector<unsigned char> copied(zeros.size()), image_after(source.size());
      const std::size_t origin[3] = {0, 0, 0};
      RETURN_CL_FAILURE(clEnqueueReadBuffer(s.queue, target, CL_TRUE, 0, copied.size(),
                                            copied.data(), 0, nullptr, nullptr));
      RETURN_CL_FAILURE(clEnqueueReadImage(s.queue, image, CL_TRUE, origin, shape.extent, 0, 0,
                                           image_after.data(), 0, nullptr, nullptr));
      if (copied != buffer_reference) return "the image's box in the buffer is wrong";
      if (image_after != image_reference) return "the buffer's bytes in the image are wrong";
      return "";
    });
  }
}

// A format to fill, its fill color, and the bytes one pixel of that color has.
struct fill_case {
  const char* name;
  cl_image_format format;
  unsigned char color[16];
  std::vector<unsigned char> bytes;
};

template <class T>
std::vector<unsigned char> bytes_of(std::initializer_list<T> values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

template <class T>
fill_case make_fill(const char* name, cl_image_format format, std::initializer_list<T> color,
                    std::vector<unsigned char> bytes) {
  fill_case made{name, format, {}, std::move(bytes)};
  std::memcpy(made.color, color.begin(), sizeof made.color);
  return made;
}

bool supports(const side& s, cl_mem_object_type type, const cl_image_format& format) {
  cl_uint count = 0;
  EXPECT_CL(clGetSupportedImageFormats(s.context, CL_MEM_READ_WRITE, type, 0, nullptr, &count));
  std::vector<cl_image_format> formats(count);
  EXPECT_CL(clGetSupportedImageFormats(s.context, CL_MEM_READ_WRITE, type, count, formats.data(),
                                       nullptr));
  for (const auto& supported : formats) {
    if (supported.image_channel_order == format.image_channel_order &&
        supported.image_channel_data_type == format.image_channel_data_type) {
      return true;
    }
  }
  return false;
}

TEST_F(remote_image_copy, fills_of_each_supported_channel_type_match_the_cpu) {
  const fill_case fills[] = {
      make_fill<float>("UNORM_INT8", {CL_RGBA, CL_UNORM_INT8}, {0.0f, 1.0f, 0.6f, 0.2f},
                       {0, 255, 153, 51}),
      make_fill<cl_uint>("UNSIGNED_INT32", {CL_RGBA, CL_UNSIGNED_INT32},
                         {1u, 0xffffffffu, 123456u, 7u},
                         bytes_of<cl_uint>({1u, 0xffffffffu, 123456u, 7u})),
      make_fill<float>("FLOAT", {CL_RGBA, CL_FLOAT}, {1.5f, -2.0f, 0.25f, 100.0f},
                       bytes_of<float>({1.5f, -2.0f, 0.25f, 100.0f})),
      make_fill<float>("HALF_FLOAT", {CL_RGBA, CL_HALF_FLOAT}, {1.5f, -2.0f, 0.25f, 100.0f},
                       bytes_of<cl_ushort>({0x3e00, 0xc000, 0x3400, 0x5640})),
  };
  int filled = 0;
  for (const auto& fill : fills) {
    for (const auto& shape : shapes) {
      if (!supports(local, shape.type, fill.format)) continue;
      SCOPED_TRACE(std::string(fill.name) + ", " + shape.name);
      ASSERT_TRUE(supports(remote, shape.type, fill.format)) << "supported locally only";
      const std::size_t size = fill.bytes.size();
      const std::size_t count = shape.extent[0] * shape.extent[1] * shape.extent[2];
      const box inside = inner_box(shape);
      std::vector<unsigned char> reference(count * size, 0);
      for_region(inside.region, [&](std::size_t x, std::size_t y, std::size_t z) {
        const std::size_t at =
            packed(shape.extent, inside.origin[0] + x, inside.origin[1] + y, inside.origin[2] + z) /
            pixel * size;
        std::memcpy(reference.data() + at, fill.bytes.data(), size);
      });
      for (side* s : checked_sides()) {
        SCOPED_TRACE(s->name);
        std::vector<unsigned char> zeros(count * size, 0);
        auto image = make_image(s->context, shape, zeros.data(), fill.format);
        ASSERT_CL(clEnqueueFillImage(s->queue, image, fill.color, inside.origin, inside.region, 0,
                                     nullptr, nullptr));
        std::vector<unsigned char> back(count * size, 0xee);
        const std::size_t origin[3] = {0, 0, 0};
        ASSERT_CL(clEnqueueReadImage(s->queue, image, CL_TRUE, origin, shape.extent, 0, 0,
                                     back.data(), 0, nullptr, nullptr));
        EXPECT_TRUE(back == reference);
      }
      ++filled;
    }
  }
  EXPECT_GT(filled, 0) << "the local device supports none of the formats";
}

}  // namespace
}  // namespace troupe::remote_test
