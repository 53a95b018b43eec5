// 2-D images and samplers, checked against a CPU reference and the local PoCL.
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "image_fixture.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

constexpr std::size_t width = 37, height = 23, pixel = 4;  // CL_RGBA, CL_UNSIGNED_INT8
constexpr cl_image_format rgba8{CL_RGBA, CL_UNSIGNED_INT8};

// A packed width x height image of random pixels.
std::vector<unsigned char> random_pixels(unsigned seed) {
  std::vector<unsigned char> pixels(width * height * pixel);
  std::mt19937 random(seed);
  for (auto& byte : pixels) byte = static_cast<unsigned char>(random());
  return pixels;
}

// Copies a w x h pixel box between two packed-or-pitched pixel arrays.
void copy_box(const unsigned char* from, std::size_t from_row, std::size_t fx, std::size_t fy,
              unsigned char* to, std::size_t to_row, std::size_t tx, std::size_t ty, std::size_t w,
              std::size_t h) {
  for (std::size_t y = 0; y < h; ++y) {
    std::memcpy(to + (ty + y) * to_row + tx * pixel, from + (fy + y) * from_row + fx * pixel,
                w * pixel);
  }
}

mem_ref make_image(cl_context context, cl_mem_flags flags, void* host, std::size_t row_pitch = 0) {
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = width;
  desc.image_height = height;
  desc.image_row_pitch = host != nullptr ? row_pitch : 0;
  cl_int status = CL_SUCCESS;
  mem_ref image(clCreateImage(context, flags, &rgba8, &desc, host, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clCreateImage gave " << cl_error_name(status);
  return image;
}

std::vector<unsigned char> read_image(const side& s, cl_mem image) {
  std::vector<unsigned char> pixels(width * height * pixel);
  const std::size_t origin[3] = {0, 0, 0}, region[3] = {width, height, 1};
  EXPECT_CL(clEnqueueReadImage(s.queue, image, CL_TRUE, origin, region, 0, 0, pixels.data(), 0,
                               nullptr, nullptr));
  return pixels;
}

TEST_F(remote_image, formats_and_info_match_the_local_device) {
  auto formats = [](const side& s) {
    cl_uint count = 0;
    EXPECT_CL(clGetSupportedImageFormats(s.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0,
                                         nullptr, &count));
    std::vector<cl_image_format> list(count);
    EXPECT_CL(clGetSupportedImageFormats(s.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, count,
                                         list.data(), nullptr));
    std::set<std::pair<cl_uint, cl_uint>> set;
    for (auto& format : list)
      set.emplace(format.image_channel_order, format.image_channel_data_type);
    return set;
  };
  auto remote_formats = formats(remote);
  EXPECT_EQ(remote_formats, formats(local));
  EXPECT_TRUE(remote_formats.contains({CL_RGBA, CL_UNSIGNED_INT8}));

  auto image = make_image(remote.context, CL_MEM_READ_WRITE, nullptr);
  EXPECT_EQ(info<std::size_t>(clGetImageInfo, image.get(), CL_IMAGE_WIDTH), width);
  EXPECT_EQ(info<std::size_t>(clGetImageInfo, image.get(), CL_IMAGE_HEIGHT), height);
  EXPECT_EQ(info<std::size_t>(clGetImageInfo, image.get(), CL_IMAGE_ELEMENT_SIZE), pixel);
  auto format = info<cl_image_format>(clGetImageInfo, image.get(), CL_IMAGE_FORMAT);
  EXPECT_EQ(format.image_channel_order, rgba8.image_channel_order);
  EXPECT_EQ(format.image_channel_data_type, rgba8.image_channel_data_type);
  EXPECT_EQ(info<cl_mem_object_type>(clGetMemObjectInfo, image.get(), CL_MEM_TYPE),
            static_cast<cl_mem_object_type>(CL_MEM_OBJECT_IMAGE2D));
}

TEST_F(remote_image, host_data_with_a_row_pitch_reads_back) {
  auto pixels = random_pixels(1);
  const std::size_t pitch = width * pixel + 12;
  std::vector<unsigned char> pitched(pitch * height, 0xcd);
  copy_box(pixels.data(), width * pixel, 0, 0, pitched.data(), pitch, 0, 0, width, height);
  // A sub-region read into a host array with a row pitch of its own.
  const std::size_t origin[3] = {5, 3, 0}, region[3] = {11, 7, 1};
  const std::size_t host_pitch = 64;
  std::vector<unsigned char> expected_part(host_pitch * region[1], 0xee);
  copy_box(pixels.data(), width * pixel, origin[0], origin[1], expected_part.data(), host_pitch, 0,
           0, region[0], region[1]);
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto pitched_image = make_image(s->context, CL_MEM_COPY_HOST_PTR, pitched.data(), pitch);
    auto packed_image = make_image(s->context, CL_MEM_COPY_HOST_PTR, pixels.data());
    EXPECT_TRUE(read_image(*s, pitched_image) == pixels);
    EXPECT_TRUE(read_image(*s, packed_image) == pixels);
    std::vector<unsigned char> part(host_pitch * region[1], 0xee);
    ASSERT_CL(clEnqueueReadImage(s->queue, pitched_image, CL_TRUE, origin, region, host_pitch, 0,
                                 part.data(), 0, nullptr, nullptr));
    EXPECT_TRUE(part == expected_part);
    // Again without blocking: the rows are in place once the read's event is complete.
    std::vector<unsigned char> later(host_pitch * region[1], 0xee);
    event_ref read;
    ASSERT_CL(clEnqueueReadImage(s->queue, pitched_image, CL_FALSE, origin, region, host_pitch, 0,
                                 later.data(), 0, nullptr, read.out()));
    ASSERT_CL(clWaitForEvents(1, read.ptr()));
    EXPECT_TRUE(later == expected_part);
  }
}

TEST_F(remote_image, write_fill_and_copy_match_the_cpu) {
  auto first = random_pixels(2), second = random_pixels(3), patch = random_pixels(4);
  // CPU reference: a 9 x 6 patch written at (2, 4), a 5 x 5 fill at (20, 10), then a 12 x 8
  // box of the first image copied to (25, 15) of the second.
  auto expected_first = first, expected_second = second;
  copy_box(patch.data(), 9 * pixel, 0, 0, expected_first.data(), width * pixel, 2, 4, 9, 6);
  const cl_uint4 color{{10, 20, 30, 40}};
  for (std::size_t y = 10; y < 15; ++y) {
    for (std::size_t x = 20; x < 25; ++x) {
      for (std::size_t c = 0; c < 4; ++c) {
        expected_first[(y * width + x) * pixel + c] = static_cast<unsigned char>(color.s[c]);
      }
    }
  }
  copy_box(expected_first.data(), width * pixel, 1, 2, expected_second.data(), width * pixel, 25,
           15, 12, 8);
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto a = make_image(s->context, CL_MEM_COPY_HOST_PTR, first.data());
    auto b = make_image(s->context, CL_MEM_COPY_HOST_PTR, second.data());
    const std::size_t write_origin[3] = {2, 4, 0}, write_region[3] = {9, 6, 1};
    ASSERT_CL(clEnqueueWriteImage(s->queue, a, CL_FALSE, write_origin, write_region, 0, 0,
                                  patch.data(), 0, nullptr, nullptr));
    const std::size_t fill_origin[3] = {20, 10, 0}, fill_region[3] = {5, 5, 1};
    ASSERT_CL(
        clEnqueueFillImage(s->queue, a, &color, fill_origin, fill_region, 0, nullptr, nullptr));
    const std::size_t from[3] = {1, 2, 0}, to[3] = {25, 15, 0}, box[3] = {12, 8, 1};
    ASSERT_CL(clEnqueueCopyImage(s->queue, a, b, from, to, box, 0, nullptr, nullptr));
    EXPECT_TRUE(read_image(*s, a) == expected_first);
    EXPECT_TRUE(read_image(*s, b) == expected_second);
  }
}

TEST_F(remote_image, copies_to_and_from_buffers) {
  auto pixels = random_pixels(5), other = random_pixels(6);
  const std::size_t box_w = 10, box_h = 4, offset = 64;
  std::vector<unsigned char> expected_buffer(offset + box_w * box_h * pixel + 32, 0);
  copy_box(pixels.data(), width * pixel, 3, 5, expected_buffer.data() + offset, box_w * pixel, 0, 0,
           box_w, box_h);
  auto expected_other = other;
  copy_box(expected_buffer.data() + offset, box_w * pixel, 0, 0, expected_other.data(),
           width * pixel, 20, 11, box_w, box_h);
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto image = make_image(s->context, CL_MEM_COPY_HOST_PTR, pixels.data());
    auto target = make_image(s->context, CL_MEM_COPY_HOST_PTR, other.data());
    std::vector<unsigned char> zeros(expected_buffer.size(), 0);
    auto buffer = make_buffer(s->context, zeros.size(), CL_MEM_COPY_HOST_PTR, zeros.data());
    const std::size_t origin[3] = {3, 5, 0}, region[3] = {box_w, box_h, 1};
    ASSERT_CL(clEnqueueCopyImageToBuffer(s->queue, image, buffer, origin, region, offset, 0,
                                         nullptr, nullptr));
    const std::size_t to[3] = {20, 11, 0};
    ASSERT_CL(clEnqueueCopyBufferToImage(s->queue, buffer, target, offset, to, region, 0, nullptr,
                                         nullptr));
    std::vector<unsigned char> back(zeros.size());
    ASSERT_CL(clEnqueueReadBuffer(s->queue, buffer, CL_TRUE, 0, back.size(), back.data(), 0,
                                  nullptr, nullptr));
    EXPECT_TRUE(back == expected_buffer);
    EXPECT_TRUE(read_image(*s, target) == expected_other);
  }
}

TEST_F(remote_image, maps_for_reading_and_writing) {
  auto pixels = random_pixels(7);
  auto expected = pixels;
  for (std::size_t y = 6; y < 16; ++y) {
    for (std::size_t x = 4; x < 12; ++x) expected[(y * width + x) * pixel] ^= 0x5a;
  }
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto image = make_image(s->context, CL_MEM_COPY_HOST_PTR, pixels.data());
    const std::size_t origin[3] = {4, 6, 0}, region[3] = {8, 10, 1};
    std::size_t row_pitch = 0, slice_pitch = 0;
    cl_int status = CL_SUCCESS;
    auto* mapped = static_cast<unsigned char*>(
        clEnqueueMapImage(s->queue, image, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, origin, region,
                          &row_pitch, &slice_pitch, 0, nullptr, nullptr, &status));
    ASSERT_CL(status);
    ASSERT_GE(row_pitch, region[0] * pixel);
    for (std::size_t y = 0; y < region[1]; ++y) {
      ASSERT_EQ(std::memcmp(mapped + y * row_pitch,
                            pixels.data() + ((origin[1] + y) * width + origin[0]) * pixel,
                            region[0] * pixel),
                0)
          << "row " << y;
      for (std::size_t x = 0; x < region[0]; ++x) mapped[y * row_pitch + x * pixel] ^= 0x5a;
    }
    ASSERT_CL(clEnqueueUnmapMemObject(s->queue, image, mapped, 0, nullptr, nullptr));
    EXPECT_TRUE(read_image(*s, image) == expected);
  }
}

TEST_F(remote_image, kernels_sample_and_write_images) {
  // Reads through a sampler set by the host (clamped, unnormalized, nearest), shifted by two
  // pixels so that the clamp shows, and writes the result to a second image.
  const char* source = R"(
__kernel void shift(__read_only image2d_t in, sampler_t sampler, __write_only image2d_t out) {
  int2 at = (int2)(get_global_id(0), get_global_id(1));
  write_imageui(out, at, read_imageui(in, sampler, at - (int2)(2, 2)));
}
)";
  auto pixels = random_pixels(8);
  std::vector<unsigned char> expected(pixels.size());
  for (std::size_t y = 0; y < height; ++y) {
    for (std::size_t x = 0; x < width; ++x) {
      std::size_t sx = x < 2 ? 0 : x - 2, sy = y < 2 ? 0 : y - 2;
      std::memcpy(&expected[(y * width + x) * pixel], &pixels[(sy * width + sx) * pixel], pixel);
    }
  }
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, source);
    auto kernel = make_kernel(program, "shift");
    auto in = make_image(s->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pixels.data());
    auto out = make_image(s->context, CL_MEM_WRITE_ONLY, nullptr);
    cl_int status = CL_SUCCESS;
    sampler_ref sampler(clCreateSampler(s->context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE,
                                        CL_FILTER_NEAREST, &status));
    ASSERT_CL(status);
    EXPECT_EQ(info<cl_addressing_mode>(clGetSamplerInfo, sampler.get(), CL_SAMPLER_ADDRESSING_MODE),
              static_cast<cl_addressing_mode>(CL_ADDRESS_CLAMP_TO_EDGE));
    EXPECT_EQ(info<cl_filter_mode>(clGetSamplerInfo, sampler.get(), CL_SAMPLER_FILTER_MODE),
              static_cast<cl_filter_mode>(CL_FILTER_NEAREST));
    EXPECT_EQ(info<cl_bool>(clGetSamplerInfo, sampler.get(), CL_SAMPLER_NORMALIZED_COORDS),
              static_cast<cl_bool>(CL_FALSE));
    EXPECT_EQ(info<cl_context>(clGetSamplerInfo, sampler.get(), CL_SAMPLER_CONTEXT),
              s->context.get());
    ASSERT_CL(set_arg(kernel, 0, in.get()));
    ASSERT_CL(set_arg(kernel, 1, sampler.get()));
    ASSERT_CL(set_arg(kernel, 2, out.get()));
    const std::size_t global[2] = {width, height};
    ASSERT_CL(
        clEnqueueNDRangeKernel(s->queue, kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    EXPECT_TRUE(read_image(*s, out) == expected);
  }
}

}  // namespace
}  // namespace troupe::remote_test
