// Images and samplers.
#include "remote/icd/api_support.hpp"
#include "remote/protocol/image_format.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

extern "C" {

CL_API_ENTRY cl_mem CL_API_CALL clCreateImage(cl_context context, cl_mem_flags flags,
                                              const cl_image_format* format,
                                              const cl_image_desc* desc, void* host_ptr,
                                              cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (format == nullptr) return fail(errcode_ret, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  if (desc == nullptr) return fail(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR);
  if (((flags & host_pointer_flags) != 0) != (host_ptr != nullptr)) {
    return fail(errcode_ret, CL_INVALID_HOST_PTR);
  }
  if (desc->buffer != nullptr && !is_mem(desc->buffer)) {
    return fail(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR);
  }
  // Rows and slices of the image as the host sees them.
  std::size_t height = desc->image_height, depth = desc->image_depth;
  switch (desc->image_type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
      height = depth = 1;
      break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      height = 1;
      depth = desc->image_array_size;
      break;
    case CL_MEM_OBJECT_IMAGE2D:
      depth = 1;
      break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      depth = desc->image_array_size;
      break;
    case CL_MEM_OBJECT_IMAGE3D:
      break;
    default:
      return fail(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR);
  }
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_image);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  creating.fields.put<std::uint64_t>(flags)
      .put<std::uint32_t>(format->image_channel_order)
      .put<std::uint32_t>(format->image_channel_data_type)
      .put<std::uint32_t>(desc->image_type)
      .put<std::uint64_t>(desc->image_width)
      .put<std::uint64_t>(desc->image_height)
      .put<std::uint64_t>(desc->image_depth)
      .put<std::uint64_t>(desc->image_array_size)
      .put<std::uint64_t>(desc->image_row_pitch)
      .put<std::uint64_t>(desc->image_slice_pitch);
  creating.object(desc->buffer);
  std::size_t initial = 0;
  if (host_ptr != nullptr) {
    // The host memory as laid out by its pitches; the server reads it with the same pitches.
    std::size_t row = desc->image_row_pitch;
    std::size_t slice = desc->image_slice_pitch;
    if (row == 0 || (depth > 1 && slice == 0)) {
      // Pitches of 0 mean packed rows, of the format's element size.
      const std::size_t element = image_element_size(*format);
      if (element == 0) return fail(errcode_ret, CL_IMAGE_FORMAT_NOT_SUPPORTED);
      if (row == 0) row = desc->image_width * element;
      if (slice == 0) slice = row * height;
    }
    initial = depth > 1 ? slice * depth : row * height;
  }
  creating.fields.put_tail(host_ptr, initial);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* image = new _cl_mem(object_kind::mem, context->server, id);
  image->context = context;
  hold_parent(image, context);
  image->flags = flags;
  image->host_pointer = (flags & CL_MEM_USE_HOST_PTR) != 0 ? host_ptr : nullptr;
  image->type = desc->image_type;
  image->format = *format;
  image->width = desc->image_width;
  image->height = height;
  image->depth = depth;
  std::vector<std::byte> value;
  if (fetch_info(info_query::image, image, CL_IMAGE_ELEMENT_SIZE, 0, value) == CL_SUCCESS &&
      value.size() == sizeof(std::size_t)) {
    std::memcpy(&image->element_size, value.data(), sizeof(std::size_t));
  }
  image->size = image->element_size * image->width * height * depth;
  return register_mem(image, errcode_ret);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateImage2D(cl_context context, cl_mem_flags flags,
                                                const cl_image_format* format, size_t width,
                                                size_t height, size_t row_pitch, void* host_ptr,
                                                cl_int* errcode_ret) {
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = width;
  desc.image_height = height;
  desc.image_row_pitch = row_pitch;
  return clCreateImage(context, flags, format, &desc, host_ptr, errcode_ret);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateImage3D(cl_context context, cl_mem_flags flags,
                                                const cl_image_format* format, size_t width,
                                                size_t height, size_t depth, size_t row_pitch,
                                                size_t slice_pitch, void* host_ptr,
                                                cl_int* errcode_ret) {
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE3D;
  desc.image_width = width;
  desc.image_height = height;
  desc.image_depth = depth;
  desc.image_row_pitch = row_pitch;
  desc.image_slice_pitch = slice_pitch;
  return clCreateImage(context, flags, format, &desc, host_ptr, errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                                           cl_mem_object_type image_type,
                                                           cl_uint num_entries,
                                                           cl_image_format* image_formats,
                                                           cl_uint* num_image_formats) {
  if (!valid(context, object_kind::context)) return CL_INVALID_CONTEXT;
  if (num_entries == 0 && image_formats != nullptr) return CL_INVALID_VALUE;
  request asking(opcode::get_supported_image_formats);
  asking.object(context);
  asking.fields.put<std::uint64_t>(flags).put<std::uint32_t>(image_type);
  reply answer;
  if (cl_int status = asking.call(*context->server, answer); status != CL_SUCCESS) return status;
  auto flat = answer.fields().get_array<std::uint32_t>();
  std::size_t count = flat.size() / 2;
  if (num_image_formats != nullptr) *num_image_formats = static_cast<cl_uint>(count);
  for (std::size_t i = 0; image_formats != nullptr && i < count && i < num_entries; ++i) {
    image_formats[i].image_channel_order = flat[2 * i];
    image_formats[i].image_channel_data_type = flat[2 * i + 1];
  }
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetImageInfo(cl_mem image, cl_image_info param_name,
                                               size_t param_value_size, void* param_value,
                                               size_t* param_value_size_ret) {
  if (!is_mem(image)) return CL_INVALID_MEM_OBJECT;
  return forward_info(info_query::image, image, param_name, 0, param_value_size, param_value,
                      param_value_size_ret);
}

CL_API_ENTRY cl_sampler CL_API_CALL clCreateSampler(cl_context context, cl_bool normalized_coords,
                                                    cl_addressing_mode addressing_mode,
                                                    cl_filter_mode filter_mode,
                                                    cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_sampler);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  creating.fields.put<std::uint32_t>(normalized_coords)
      .put<std::uint32_t>(addressing_mode)
      .put<std::uint32_t>(filter_mode);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* sampler = new _cl_sampler(object_kind::sampler, context->server, id);
  sampler->context = context;
  hold_parent(sampler, context);
  context->server->register_object(sampler);
  succeed(errcode_ret);
  return sampler;
}

CL_API_ENTRY cl_int CL_API_CALL clRetainSampler(cl_sampler sampler) {
  if (!valid(sampler, object_kind::sampler)) return CL_INVALID_SAMPLER;
  ++sampler->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseSampler(cl_sampler sampler) {
  if (!valid(sampler, object_kind::sampler)) return CL_INVALID_SAMPLER;
  release_object(sampler);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name,
                                                 size_t param_value_size, void* param_value,
                                                 size_t* param_value_size_ret) {
  if (!valid(sampler, object_kind::sampler)) return CL_INVALID_SAMPLER;
  if (param_name == CL_SAMPLER_REFERENCE_COUNT) {
    auto count = static_cast<cl_uint>(sampler->references.load());
    return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
  }
  return forward_info(info_query::sampler, sampler, param_name, 0, param_value_size, param_value,
                      param_value_size_ret);
}

}  // extern "C"
