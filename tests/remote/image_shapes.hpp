#pragma once

// Images of every type for the image tests: their shapes, pixels that name their place, and
// images made from them.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "cl_checks.hpp"
#include "cl_ref.hpp"

namespace troupe::remote_test {

/// The format most image tests use, and the bytes of one of its pixels.
inline constexpr cl_image_format rgba8{CL_RGBA, CL_UNSIGNED_INT8};
inline constexpr std::size_t pixel = 4;

/// One image type with its size, as (width, height, depth or array size) in the region's terms:
/// a 1D array's images count in region[1], a 2D array's in region[2].
struct image_shape {
  cl_mem_object_type type;
  std::size_t extent[3];
  const char* name;
};

/// One shape of each image type.
inline constexpr image_shape shapes[] = {
    {CL_MEM_OBJECT_IMAGE1D, {29, 1, 1}, "1D image"},
    {CL_MEM_OBJECT_IMAGE1D_ARRAY, {29, 5, 1}, "1D image array"},
    {CL_MEM_OBJECT_IMAGE2D, {29, 11, 1}, "2D image"},
    {CL_MEM_OBJECT_IMAGE2D_ARRAY, {29, 11, 5}, "2D image array"},
    {CL_MEM_OBJECT_IMAGE3D, {29, 11, 5}, "3D image"},
};

/// Whether images of `type` have a slice pitch: 3D images and arrays.
inline bool has_slices(cl_mem_object_type type) {
  return type == CL_MEM_OBJECT_IMAGE1D_ARRAY || type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
         type == CL_MEM_OBJECT_IMAGE3D;
}

/// Every pixel's bytes name its place, so that any byte read from the wrong place shows.
inline std::vector<unsigned char> numbered_pixels(const image_shape& shape) {
  std::vector<unsigned char> pixels(shape.extent[0] * shape.extent[1] * shape.extent[2] * pixel);
  for (std::size_t i = 0; i < pixels.size() / pixel; ++i) {
    pixels[i * pixel + 0] = static_cast<unsigned char>(i);
    pixels[i * pixel + 1] = static_cast<unsigned char>(i >> 8);
    pixels[i * pixel + 2] = static_cast<unsigned char>(i * 7 + 3);
    pixels[i * pixel + 3] = 0xa5;
  }
  return pixels;
}

/// An image of `shape` and `format` with the packed contents `host`.
inline mem_ref make_image(cl_context context, const image_shape& shape, void* host,
                          const cl_image_format& format = rgba8) {
  cl_image_desc desc{};
  desc.image_type = shape.type;
  desc.image_width = shape.extent[0];
  desc.image_height = 1;
  desc.image_depth = 1;
  switch (shape.type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      desc.image_array_size = shape.extent[1];
      break;
    case CL_MEM_OBJECT_IMAGE2D:
      desc.image_height = shape.extent[1];
      break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      desc.image_height = shape.extent[1];
      desc.image_array_size = shape.extent[2];
      break;
    case CL_MEM_OBJECT_IMAGE3D:
      desc.image_height = shape.extent[1];
      desc.image_depth = shape.extent[2];
      break;
    default:
      break;
  }
  cl_int status = CL_SUCCESS;
  mem_ref image(clCreateImage(context, CL_MEM_COPY_HOST_PTR, &format, &desc, host, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clCreateImage gave " << cl_error_name(status);
  return image;
}

}  // namespace troupe::remote_test
