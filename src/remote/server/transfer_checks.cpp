#include "remote/server/transfer_checks.hpp"

#include <string>

#include "remote/protocol/rect_checks.hpp"
#include "remote/server/call.hpp"

namespace troupe::remote::server {

namespace {

std::size_t mem_size(cl_mem mem) {
  std::size_t size = 0;
  check(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr),
        "clGetMemObjectInfo(CL_MEM_SIZE)");
  return size;
}

std::size_t image_info(cl_mem image, cl_image_info what) {
  std::size_t value = 0;
  check(clGetImageInfo(image, what, sizeof value, &value, nullptr), "clGetImageInfo");
  return value;
}

std::string text(const triple& values) {
  return std::to_string(values[0]) + " x " + std::to_string(values[1]) + " x " +
         std::to_string(values[2]);
}

}  // namespace

void check_buffer_span(cl_mem buffer, std::uint64_t offset, std::uint64_t size, const char* which) {
  const std::size_t whole = mem_size(buffer);
  if (offset > whole || size > whole - offset) {
    throw cl_failure{CL_INVALID_VALUE, std::string(which) + " of " + std::to_string(size) +
                                           " bytes at " + std::to_string(offset) +
                                           " reaches past its buffer of " + std::to_string(whole) +
                                           " bytes"};
  }
}

void check_spans_apart(std::uint64_t first, std::uint64_t second, std::uint64_t size) {
  if ((first > second ? first - second : second - first) < size) {
    throw cl_failure{CL_MEM_COPY_OVERLAP, "the copy's source and target overlap"};
  }
}

void check_fill_pattern(std::size_t pattern_size, std::uint64_t offset, std::uint64_t size) {
  const bool power_of_two = pattern_size != 0 && (pattern_size & (pattern_size - 1)) == 0;
  if (!power_of_two || pattern_size > 128 || offset % pattern_size != 0 ||
      size % pattern_size != 0) {
    throw cl_failure{CL_INVALID_VALUE, "a fill pattern of " + std::to_string(pattern_size) +
                                           " bytes for " + std::to_string(size) + " bytes at " +
                                           std::to_string(offset)};
  }
}

void check_same_format(cl_mem source, cl_mem target) {
  cl_image_format from{}, to{};
  check(clGetImageInfo(source, CL_IMAGE_FORMAT, sizeof from, &from, nullptr),
        "clGetImageInfo(CL_IMAGE_FORMAT)");
  check(clGetImageInfo(target, CL_IMAGE_FORMAT, sizeof to, &to, nullptr),
        "clGetImageInfo(CL_IMAGE_FORMAT)");
  if (from.image_channel_order != to.image_channel_order ||
      from.image_channel_data_type != to.image_channel_data_type) {
    throw cl_failure{CL_IMAGE_FORMAT_MISMATCH, "the copy's images have different formats"};
  }
}

void check_buffer_rect(cl_mem buffer, const triple& origin, const triple& region,
                       std::size_t row_pitch, std::size_t slice_pitch, const char* which) {
  const std::size_t whole = mem_size(buffer);
  if (remote::check_buffer_rect(whole, origin.data(), region.data(), row_pitch, slice_pitch) !=
      CL_SUCCESS) {
    throw cl_failure{CL_INVALID_VALUE, std::string(which) + " rectangle " + text(region) +
                                           " has wrong pitches or reaches past its buffer of " +
                                           std::to_string(whole) + " bytes"};
  }
}

void check_image_box(cl_mem image, const triple& origin, const triple& region, const char* which) {
  cl_mem_object_type type = 0;
  check(clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof type, &type, nullptr),
        "clGetMemObjectInfo(CL_MEM_TYPE)");
  const std::size_t width = image_info(image, CL_IMAGE_WIDTH);
  const std::size_t height = image_info(image, CL_IMAGE_HEIGHT);
  const std::size_t depth = image_info(image, CL_IMAGE_DEPTH);
  const std::size_t layers = image_info(image, CL_IMAGE_ARRAY_SIZE);
  triple extent{width, 1, 1};
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) extent[1] = layers;
  if (type == CL_MEM_OBJECT_IMAGE2D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
      type == CL_MEM_OBJECT_IMAGE3D) {
    extent[1] = height;
  }
  if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY) extent[2] = layers;
  if (type == CL_MEM_OBJECT_IMAGE3D) extent[2] = depth;
  if (check_box(extent.data(), origin.data(), region.data()) != CL_SUCCESS) {
    throw cl_failure{CL_INVALID_VALUE, std::string(which) + " region " + text(region) + " at " +
                                           text(origin) + " reaches past its image of " +
                                           text(extent)};
  }
}

}  // namespace troupe::remote::server
