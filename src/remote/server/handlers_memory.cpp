// Buffers, images and samplers: creating them, and the image formats a context supports.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "remote/protocol/image_format.hpp"
#include "remote/server/handlers.hpp"
#include "remote/server/transfer_checks.hpp"
#include "remote/server/zero_fill.hpp"

namespace troupe::remote::server {

namespace {

// clCreateImage copies the image from its host pointer by the descriptor's sizes and pitches:
// the initial contents must hold every byte it reads, or the server would copy its own heap
// into the image (which the client can read back).
void check_image_contents(const cl_image_format& format, const cl_image_desc& desc,
                          std::size_t given) {
  const std::size_t element = image_element_size(format);
  if (element == 0) {
    throw cl_failure{CL_IMAGE_FORMAT_NOT_SUPPORTED, "image format with initial contents"};
  }
  std::size_t rows = 1, slices = 1;
  switch (desc.image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
      break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      slices = desc.image_array_size;
      break;
    case CL_MEM_OBJECT_IMAGE2D:
      rows = desc.image_height;
      break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      rows = desc.image_height;
      slices = desc.image_array_size;
      break;
    case CL_MEM_OBJECT_IMAGE3D:
      rows = desc.image_height;
      slices = desc.image_depth;
      break;
    default:
      throw cl_failure{CL_INVALID_IMAGE_DESCRIPTOR, "image type with initial contents"};
  }
  if (desc.image_width == 0 || rows == 0 || slices == 0) {
    throw cl_failure{CL_INVALID_IMAGE_SIZE, "image with an empty dimension"};
  }
  // Bytes read: every slice pitch and row pitch in full. The platform may copy whole pitches
  // (PoCL 3.1 read a 1D image's 16 KiB row pitch from 64 bytes of contents).
  std::size_t row_bytes = 0, packed_slice = 0, need = 0;
  bool overflow = __builtin_mul_overflow(desc.image_width, element, &row_bytes);
  std::size_t row = desc.image_row_pitch != 0 ? desc.image_row_pitch : row_bytes;
  overflow |= __builtin_mul_overflow(row, rows, &packed_slice);
  std::size_t slice = desc.image_slice_pitch != 0 ? desc.image_slice_pitch : packed_slice;
  if (!overflow && (row < row_bytes || (slices > 1 && slice < packed_slice))) {
    throw cl_failure{CL_INVALID_IMAGE_DESCRIPTOR, "image pitches smaller than its rows"};
  }
  overflow |= __builtin_mul_overflow(slice, slices, &need);
  if (overflow) throw cl_failure{CL_INVALID_IMAGE_SIZE, "image size overflows"};
  if (given < need) {
    throw cl_failure{CL_INVALID_VALUE, "image needs " + std::to_string(need) +
                                           " bytes of initial contents; " + std::to_string(given) +
                                           " came"};
  }
}

// The bytes an image of `format` and `desc` takes at least, for the device memory quota; an
// image on a buffer (1-D image buffers) takes none of its own.
std::uint64_t image_bytes(const cl_image_format& format, const cl_image_desc& desc) {
  if (desc.buffer != nullptr) return 0;
  std::uint64_t bytes = image_element_size(format);
  auto extent = [](std::size_t size) { return std::max<std::uint64_t>(size, 1); };
  std::uint64_t layers = desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                                 desc.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY
                             ? extent(desc.image_array_size)
                             : 1;
  std::uint64_t height = desc.image_type == CL_MEM_OBJECT_IMAGE1D ||
                                 desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                                 desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER
                             ? 1
                             : extent(desc.image_height);
  std::uint64_t depth = desc.image_type == CL_MEM_OBJECT_IMAGE3D ? extent(desc.image_depth) : 1;
  for (std::uint64_t factor : {extent(desc.image_width), height, depth, layers}) {
    if (__builtin_mul_overflow(bytes, factor, &bytes)) return UINT64_MAX;  // refused by quota
  }
  return bytes;
}

}  // namespace

namespace handlers {

void create_buffer(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto flags = c.in.get<std::uint64_t>();
  auto size = c.in.get<std::uint64_t>();
  auto initial = c.in.get_bytes();
  // The client's host pointer stays on the client: the server copies the initial contents.
  flags &= ~static_cast<cl_mem_flags>(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  void* host = nullptr;
  if (!initial.empty()) {
    if (initial.size() != size) {
      throw cl_failure{CL_INVALID_VALUE, "buffer of " + std::to_string(size) + " bytes with " +
                                             std::to_string(initial.size()) +
                                             " bytes of initial contents"};
    }
    flags |= CL_MEM_COPY_HOST_PTR;
    host = const_cast<std::byte*>(initial.data());
  }
  // Counted before anything is allocated: a refused buffer costs the device nothing.
  auto object = c.owner.quota().take(quota_resource::objects, 1, "clCreateBuffer");
  auto memory = c.owner.quota().take(quota_resource::device_memory, size, "clCreateBuffer");
  cl_mem buffer = clCreateBuffer(context, flags, size, host, &status);
  check(status, "clCreateBuffer");
  // Zeroed before the id names it: no request of the session sees what it held before.
  if (host == nullptr) zero_fill(*c.held.front(), buffer);
  c.owner.add(id, object_kind::mem, buffer, std::move(memory), std::move(object));
}

void create_sub_buffer(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto parent = c.object<cl_mem>(object_kind::mem, CL_INVALID_MEM_OBJECT);
  auto flags = c.in.get<std::uint64_t>();
  cl_buffer_region region{};
  region.origin = c.in.get<std::uint64_t>();
  region.size = c.in.get<std::uint64_t>();
  // Inside its parent, checked here: PoCL adds origin and size with wrap-around, and a
  // sub-buffer larger than its parent would pass every later check of what a transfer names.
  check_buffer_span(parent, region.origin, region.size, "the sub-buffer");
  cl_mem sub = clCreateSubBuffer(parent, flags, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  check(status, "clCreateSubBuffer");
  c.owner.add(id, object_kind::mem, sub);
}

void create_image(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto flags = c.in.get<std::uint64_t>();
  cl_image_format format{};
  format.image_channel_order = c.in.get<std::uint32_t>();
  format.image_channel_data_type = c.in.get<std::uint32_t>();
  cl_image_desc desc{};
  desc.image_type = c.in.get<std::uint32_t>();
  desc.image_width = c.in.get<std::uint64_t>();
  desc.image_height = c.in.get<std::uint64_t>();
  desc.image_depth = c.in.get<std::uint64_t>();
  desc.image_array_size = c.in.get<std::uint64_t>();
  desc.image_row_pitch = c.in.get<std::uint64_t>();
  desc.image_slice_pitch = c.in.get<std::uint64_t>();
  auto buffer_id = c.in.get<std::uint64_t>();
  if (buffer_id != 0) {
    desc.buffer = c.object_by_id<cl_mem>(buffer_id, object_kind::mem, CL_INVALID_IMAGE_DESCRIPTOR);
  }
  auto initial = c.in.get_bytes();
  flags &= ~static_cast<cl_mem_flags>(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  void* host = nullptr;
  if (!initial.empty()) {
    // A slice pitch matters only between slices: the driver sends one slice's bytes where there
    // is one, and the platform must not read a pitch beyond them.
    const std::size_t slices = desc.image_type == CL_MEM_OBJECT_IMAGE3D ? desc.image_depth
                               : desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                                       desc.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY
                                   ? desc.image_array_size
                                   : 1;
    if (slices <= 1) desc.image_slice_pitch = 0;
    check_image_contents(format, desc, initial.size());
    flags |= CL_MEM_COPY_HOST_PTR;
    host = const_cast<std::byte*>(initial.data());
  } else {
    desc.image_row_pitch = 0;  // pitches describe host memory, which the server has none of
    desc.image_slice_pitch = 0;
  }
  auto object = c.owner.quota().take(quota_resource::objects, 1, "clCreateImage");
  auto memory = c.owner.quota().take(quota_resource::device_memory, image_bytes(format, desc),
                                     "clCreateImage");
  cl_mem image = clCreateImage(context, flags, &format, &desc, host, &status);
  check(status, "clCreateImage");
  // An image on a buffer shows the buffer's bytes, which were zeroed when it was made.
  if (host == nullptr && desc.buffer == nullptr) zero_fill(*c.held.front(), image);
  c.owner.add(id, object_kind::mem, image, std::move(memory), std::move(object));
}

void get_supported_image_formats(call& c) {
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto flags = c.in.get<std::uint64_t>();
  auto type = c.in.get<std::uint32_t>();
  cl_uint count = 0;
  check(clGetSupportedImageFormats(context, flags, type, 0, nullptr, &count),
        "clGetSupportedImageFormats");
  std::vector<cl_image_format> formats(count);
  check(clGetSupportedImageFormats(context, flags, type, count, formats.data(), nullptr),
        "clGetSupportedImageFormats");
  std::vector<std::uint32_t> flat;
  for (auto& format : formats) {
    flat.push_back(format.image_channel_order);
    flat.push_back(format.image_channel_data_type);
  }
  c.out.put_array<std::uint32_t>(flat);
}

void create_sampler(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto normalized = c.in.get<std::uint32_t>();
  auto addressing = c.in.get<std::uint32_t>();
  auto filter = c.in.get<std::uint32_t>();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  cl_sampler sampler = clCreateSampler(context, normalized, addressing, filter, &status);
#pragma GCC diagnostic pop
  check(status, "clCreateSampler");
  c.owner.add(id, object_kind::sampler, sampler);
}

}  // namespace handlers

}  // namespace troupe::remote::server
