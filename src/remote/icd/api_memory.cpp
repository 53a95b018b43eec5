// Buffers, images and samplers, and every command that moves their bytes.
#include <algorithm>
#include <cstdlib>

#include "remote/icd/api_support.hpp"
#include "remote/protocol/image_format.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

constexpr cl_mem_flags host_pointer_flags = CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR;

cl_mem register_mem(_cl_mem* memory, cl_int* errcode_ret) {
  memory->server->register_object(memory);
  succeed(errcode_ret);
  return memory;
}

// Copies a 3-D region between two layouts of host memory (rows of `row_bytes`).
void copy_region(const std::byte* from, std::size_t from_row, std::size_t from_slice, std::byte* to,
                 std::size_t to_row, std::size_t to_slice, std::size_t row_bytes, std::size_t rows,
                 std::size_t slices) {
  for (std::size_t z = 0; z < slices; ++z) {
    for (std::size_t y = 0; y < rows; ++y) {
      std::memcpy(to + z * to_slice + y * to_row, from + z * from_slice + y * from_row, row_bytes);
    }
  }
}

void put_triple(request& command, const std::size_t* values) {
  for (int i = 0; i < 3; ++i) command.fields.put<std::uint64_t>(values[i]);
}

// The host bytes a region of `rows` x `slices` rows of `row_bytes` spans in a layout.
std::size_t region_span(std::size_t row_pitch, std::size_t slice_pitch, std::size_t row_bytes,
                        std::size_t rows, std::size_t slices) {
  if (rows == 0 || slices == 0) return 0;
  return (slices - 1) * slice_pitch + (rows - 1) * row_pitch + row_bytes;
}

// Sends a rect or image read, whose bytes come packed and are scattered into the host's layout
// when they arrive: at once when blocking, else when something needs them (settle_event).
cl_int read_region(request& reading, cl_command_queue queue, cl_event* event, bool blocking,
                   std::byte* host, std::size_t host_row, std::size_t host_slice,
                   std::size_t row_bytes, std::size_t rows, std::size_t slices) {
  auto packed = std::make_shared<std::vector<std::byte>>(row_bytes * rows * slices);
  auto scatter = [=] {
    copy_region(packed->data(), row_bytes, row_bytes * rows, host, host_row, host_slice, row_bytes,
                rows, slices);
  };
  if (blocking) {
    cl_int status = call_command(reading, queue, event, packed->data(), packed->size());
    if (status == CL_SUCCESS) scatter();
    return status;
  }
  pending_read landing;
  landing.destination = packed->data();
  landing.size = packed->size();
  landing.unpack = scatter;
  landing.covers_begin = host;
  landing.covers_end = host + region_span(host_row, host_slice, row_bytes, rows, slices);
  return send_read(reading, queue, event, std::move(landing));
}

// A transfer's wait list and event for one of several chunks: the first chunk waits for the
// caller's list, each later one for the chunk before it; the caller's event is the last.
struct chunked {
  cl_uint num_events;
  const cl_event* wait_list;
  cl_event* event;
  cl_event previous = nullptr;

  cl_int put(request& command, cl_command_queue queue, bool last, cl_event& mine) {
    cl_event* target = last ? event : &mine;
    if (previous == nullptr) return put_command(command, queue, num_events, wait_list, target);
    return put_command(command, queue, 1, &previous, target);
  }
  void advance(cl_event mine) {
    if (previous != nullptr) clReleaseEvent(previous);
    previous = mine;
  }
  ~chunked() {
    if (previous != nullptr) clReleaseEvent(previous);
  }
};

bool is_mem(cl_mem memory) {
  return valid(memory, object_kind::mem);
}

// A blocking read or write of `buffer` on a temporary queue of its context's first device, for
// transfers that have no queue of their own (large initial contents, copies between servers).
cl_int transfer_on_own_queue(cl_mem buffer, bool write, std::size_t offset, std::size_t size,
                             void* host) {
  std::size_t bytes = 0;
  cl_int status = clGetContextInfo(buffer->context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
  if (status != CL_SUCCESS) return status;
  std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
  if (devices.empty()) return CL_INVALID_CONTEXT;
  status = clGetContextInfo(buffer->context, CL_CONTEXT_DEVICES, bytes, devices.data(), nullptr);
  if (status != CL_SUCCESS) return status;
  cl_command_queue own = clCreateCommandQueue(buffer->context, devices[0], 0, &status);
  if (status != CL_SUCCESS) return status;
  status = write
               ? clEnqueueWriteBuffer(own, buffer, CL_TRUE, offset, size, host, 0, nullptr, nullptr)
               : clEnqueueReadBuffer(own, buffer, CL_TRUE, offset, size, host, 0, nullptr, nullptr);
  clReleaseCommandQueue(own);
  return status;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                               void* host_ptr, cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (size == 0) return fail(errcode_ret, CL_INVALID_BUFFER_SIZE);
  bool wants_host = (flags & host_pointer_flags) != 0;
  if (wants_host != (host_ptr != nullptr) || (flags & host_pointer_flags) == host_pointer_flags) {
    return fail(errcode_ret, CL_INVALID_HOST_PTR);
  }
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_buffer);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  creating.fields.put<std::uint64_t>(flags).put<std::uint64_t>(size);
  // Initial contents over one frame are written after creation, in chunks (below): OpenCL
  // allows them up to the device's largest allocation.
  const bool upload_later = host_ptr != nullptr && size + 4096 > max_frame_payload;
  creating.fields.put_tail(host_ptr, host_ptr != nullptr && !upload_later ? size : 0);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* buffer = new _cl_mem(object_kind::mem, context->server, id);
  buffer->context = context;
  hold_parent(buffer, context);
  buffer->flags = flags;
  buffer->host_pointer = (flags & CL_MEM_USE_HOST_PTR) != 0 ? host_ptr : nullptr;
  buffer->size = size;
  register_mem(buffer, errcode_ret);
  if (upload_later) {
    cl_int status = transfer_on_own_queue(buffer, true, 0, size, host_ptr);
    if (status != CL_SUCCESS) {
      release_object(buffer);
      return fail(errcode_ret, status);
    }
  }
  return buffer;
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                                  cl_buffer_create_type type, const void* info,
                                                  cl_int* errcode_ret) {
  if (!is_mem(buffer) || buffer->type != CL_MEM_OBJECT_BUFFER) {
    return fail(errcode_ret, CL_INVALID_MEM_OBJECT);
  }
  if (type != CL_BUFFER_CREATE_TYPE_REGION || info == nullptr) {
    return fail(errcode_ret, CL_INVALID_VALUE);
  }
  auto* region = static_cast<const cl_buffer_region*>(info);
  std::uint64_t id = buffer->server->new_id();
  request creating(opcode::create_sub_buffer);
  creating.fields.put<std::uint64_t>(id);
  creating.object(buffer);
  creating.fields.put<std::uint64_t>(flags)
      .put<std::uint64_t>(region->origin)
      .put<std::uint64_t>(region->size);
  reply answer;
  if (cl_int status = creating.call(*buffer->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* sub = new _cl_mem(object_kind::mem, buffer->server, id);
  sub->context = buffer->context;
  hold_parent(sub, buffer);
  sub->flags = flags != 0 ? flags : buffer->flags;
  sub->host_pointer = buffer->host_pointer != nullptr
                          ? static_cast<char*>(buffer->host_pointer) + region->origin
                          : nullptr;
  sub->size = region->size;
  return register_mem(sub, errcode_ret);
}

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

CL_API_ENTRY cl_int CL_API_CALL clRetainMemObject(cl_mem memobj) {
  if (!is_mem(memobj)) return CL_INVALID_MEM_OBJECT;
  ++memobj->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem memobj) {
  if (!is_mem(memobj)) return CL_INVALID_MEM_OBJECT;
  release_object(memobj);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clSetMemObjectDestructorCallback(
    cl_mem memobj, void(CL_CALLBACK* pfn_notify)(cl_mem, void*), void* user_data) {
  if (!is_mem(memobj)) return CL_INVALID_MEM_OBJECT;
  if (pfn_notify == nullptr) return CL_INVALID_VALUE;
  std::lock_guard lock(memobj->mutex);
  memobj->destructor_callbacks.push_back({pfn_notify, user_data});
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                                                   size_t param_value_size, void* param_value,
                                                   size_t* param_value_size_ret) {
  if (!is_mem(memobj)) return CL_INVALID_MEM_OBJECT;
  switch (param_name) {
    case CL_MEM_FLAGS:
      return copy_value_info(memobj->flags, param_value_size, param_value, param_value_size_ret);
    case CL_MEM_HOST_PTR:
      return copy_value_info(memobj->host_pointer, param_value_size, param_value,
                             param_value_size_ret);
    case CL_MEM_CONTEXT:
      return copy_value_info(memobj->context, param_value_size, param_value, param_value_size_ret);
    case CL_MEM_REFERENCE_COUNT: {
      auto count = static_cast<cl_uint>(memobj->references.load());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    case CL_MEM_MAP_COUNT: {
      std::lock_guard lock(memobj->mutex);
      auto count = static_cast<cl_uint>(memobj->mappings.size());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    default:
      return forward_info(info_query::mem, memobj, param_name, 0, param_value_size, param_value,
                          param_value_size_ret);
  }
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

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(
    cl_command_queue queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size,
    void* ptr, cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(buffer)) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || size == 0) return CL_INVALID_VALUE;
  chunked chunks{num_events_in_wait_list, event_wait_list, event};
  std::uint64_t first_issue = 0;
  for (std::size_t done = 0; done < size;) {
    std::size_t piece = std::min<std::size_t>(size - done, transfer_piece);
    bool last = done + piece == size;
    request reading(opcode::read_buffer);
    cl_event mine = nullptr;
    if (cl_int status = chunks.put(reading, queue, last, mine); status != CL_SUCCESS) {
      return status;
    }
    if (first_issue == 0) first_issue = reading.issue;
    reading.object(buffer);
    reading.fields.put<std::uint64_t>(offset + done).put<std::uint64_t>(piece);
    cl_event* target = last ? event : &mine;
    auto* into = static_cast<std::byte*>(ptr) + done;
    cl_int status = CL_SUCCESS;
    if (blocking_read) {
      status = call_command(reading, queue, target, into, piece);
    } else {
      // The bytes land straight in `ptr` when something needs them (see settle_event).
      pending_read landing;
      landing.destination = into;
      landing.size = piece;
      landing.covers_begin = into;
      landing.covers_end = into + piece;
      status = send_read(reading, queue, target, std::move(landing));
    }
    if (status != CL_SUCCESS) return status;
    if (!last) chunks.advance(mine);
    done += piece;
  }
  // Complete once every piece is: the pieces form a chain on the server.
  if (event != nullptr && !queue->in_order) (*event)->settles_from = first_issue;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer,
                                                     cl_bool blocking_write, size_t offset,
                                                     size_t size, const void* ptr,
                                                     cl_uint num_events_in_wait_list,
                                                     const cl_event* event_wait_list,
                                                     cl_event* event) {
  if (!is_mem(buffer)) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || size == 0) return CL_INVALID_VALUE;
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int status = settle_overlap(*queue->server, ptr, size); status != CL_SUCCESS)
    return status;
  chunked chunks{num_events_in_wait_list, event_wait_list, event};
  for (std::size_t done = 0; done < size;) {
    std::size_t piece = std::min<std::size_t>(size - done, transfer_piece);
    bool last = done + piece == size;
    request writing(opcode::write_buffer);
    cl_event mine = nullptr;
    if (cl_int status = chunks.put(writing, queue, last, mine); status != CL_SUCCESS) {
      return status;
    }
    writing.object(buffer);
    // Only the last piece of a blocking write waits: the others are pipelined behind it.
    const bool wait = blocking_write && last;
    writing.fields.put<std::uint8_t>(wait ? 1 : 0).put<std::uint64_t>(offset + done);
    // Sent from the caller's memory: once send returns, the bytes are in the socket, so even
    // a non-blocking write leaves `ptr` free for reuse.
    writing.fields.put_tail(static_cast<const char*>(ptr) + done, piece);
    cl_event* target = last ? event : &mine;
    cl_int status =
        wait ? call_command(writing, queue, target) : send_command(writing, queue, target);
    if (status != CL_SUCCESS) return status;
    if (!last) chunks.advance(mine);
    done += piece;
  }
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBufferRect(
    cl_command_queue queue, cl_mem buffer, cl_bool blocking_read, const size_t* buffer_origin,
    const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, void* ptr,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(buffer)) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || buffer_origin == nullptr || host_origin == nullptr || region == nullptr ||
      region[0] == 0 || region[1] == 0 || region[2] == 0) {
    return CL_INVALID_VALUE;
  }
  if (host_row_pitch == 0) host_row_pitch = region[0];
  if (host_slice_pitch == 0) host_slice_pitch = region[1] * host_row_pitch;
  std::size_t packed_size = region[0] * region[1] * region[2];
  if (packed_size > max_chunk) return CL_OUT_OF_RESOURCES;
  request reading(opcode::read_buffer_rect);
  if (cl_int status = put_command(reading, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  reading.object(buffer);
  put_triple(reading, buffer_origin);
  put_triple(reading, region);
  reading.fields.put<std::uint64_t>(buffer_row_pitch).put<std::uint64_t>(buffer_slice_pitch);
  auto* host = static_cast<std::byte*>(ptr) + host_origin[2] * host_slice_pitch +
               host_origin[1] * host_row_pitch + host_origin[0];
  return read_region(reading, queue, event, blocking_read != CL_FALSE, host, host_row_pitch,
                     host_slice_pitch, region[0], region[1], region[2]);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBufferRect(
    cl_command_queue queue, cl_mem buffer, cl_bool blocking_write, const size_t* buffer_origin,
    const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, const void* ptr,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(buffer)) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || buffer_origin == nullptr || host_origin == nullptr || region == nullptr ||
      region[0] == 0 || region[1] == 0 || region[2] == 0) {
    return CL_INVALID_VALUE;
  }
  if (host_row_pitch == 0) host_row_pitch = region[0];
  if (host_slice_pitch == 0) host_slice_pitch = region[1] * host_row_pitch;
  std::size_t packed_size = region[0] * region[1] * region[2];
  if (packed_size > max_chunk) return CL_OUT_OF_RESOURCES;
  std::vector<std::byte> packed(packed_size);
  const auto* host = static_cast<const std::byte*>(ptr) + host_origin[2] * host_slice_pitch +
                     host_origin[1] * host_row_pitch + host_origin[0];
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int status = settle_overlap(
          *queue->server, host,
          region_span(host_row_pitch, host_slice_pitch, region[0], region[1], region[2]));
      status != CL_SUCCESS) {
    return status;
  }
  copy_region(host, host_row_pitch, host_slice_pitch, packed.data(), region[0],
              region[0] * region[1], region[0], region[1], region[2]);
  request writing(opcode::write_buffer_rect);
  if (cl_int status = put_command(writing, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  writing.object(buffer);
  writing.fields.put<std::uint8_t>(blocking_write ? 1 : 0);
  put_triple(writing, buffer_origin);
  put_triple(writing, region);
  writing.fields.put<std::uint64_t>(buffer_row_pitch).put<std::uint64_t>(buffer_slice_pitch);
  writing.fields.put_tail(packed.data(), packed.size());
  return blocking_write ? call_command(writing, queue, event) : send_command(writing, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer,
                                                    const void* pattern, size_t pattern_size,
                                                    size_t offset, size_t size,
                                                    cl_uint num_events_in_wait_list,
                                                    const cl_event* event_wait_list,
                                                    cl_event* event) {
  if (!is_mem(buffer)) return CL_INVALID_MEM_OBJECT;
  if (pattern == nullptr || pattern_size == 0 || pattern_size > 128) return CL_INVALID_VALUE;
  request filling(opcode::fill_buffer);
  if (cl_int status = put_command(filling, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  filling.object(buffer);
  filling.fields.put_bytes(pattern, pattern_size);
  filling.fields.put<std::uint64_t>(offset).put<std::uint64_t>(size);
  return send_command(filling, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src_buffer,
                                                    cl_mem dst_buffer, size_t src_offset,
                                                    size_t dst_offset, size_t size,
                                                    cl_uint num_events_in_wait_list,
                                                    const cl_event* event_wait_list,
                                                    cl_event* event) {
  if (!is_mem(src_buffer) || !is_mem(dst_buffer)) return CL_INVALID_MEM_OBJECT;
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  if (src_buffer->server != dst_buffer->server) {
    // Buffers on two servers: the bytes pass through this host, read on one server and written
    // on the other. troupe's extension of OpenCL, which would refuse buffers of two contexts.
    bool queue_on_source = queue->server == src_buffer->server;
    if (!queue_on_source && queue->server != dst_buffer->server) return CL_INVALID_CONTEXT;
    std::vector<std::byte> staging(size);
    cl_int status = CL_SUCCESS;
    if (queue_on_source) {
      status = clEnqueueReadBuffer(queue, src_buffer, CL_TRUE, src_offset, size, staging.data(),
                                   num_events_in_wait_list, event_wait_list, nullptr);
      if (status == CL_SUCCESS) {
        status = transfer_on_own_queue(dst_buffer, true, dst_offset, size, staging.data());
      }
      if (status == CL_SUCCESS && event != nullptr) {
        status = clEnqueueMarkerWithWaitList(queue, 0, nullptr, event);
      }
      return status;
    }
    if (num_events_in_wait_list > 0) {
      status = clWaitForEvents(num_events_in_wait_list, event_wait_list);
      if (status != CL_SUCCESS) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    status = transfer_on_own_queue(src_buffer, false, src_offset, size, staging.data());
    if (status != CL_SUCCESS) return status;
    return clEnqueueWriteBuffer(queue, dst_buffer, CL_TRUE, dst_offset, size, staging.data(), 0,
                                nullptr, event);
  }
  request copying(opcode::copy_buffer);
  if (cl_int status = put_command(copying, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  copying.object(src_buffer).object(dst_buffer);
  copying.fields.put<std::uint64_t>(src_offset)
      .put<std::uint64_t>(dst_offset)
      .put<std::uint64_t>(size);
  return send_command(copying, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferRect(
    cl_command_queue queue, cl_mem src_buffer, cl_mem dst_buffer, const size_t* src_origin,
    const size_t* dst_origin, const size_t* region, size_t src_row_pitch, size_t src_slice_pitch,
    size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(src_buffer) || !is_mem(dst_buffer)) return CL_INVALID_MEM_OBJECT;
  if (src_origin == nullptr || dst_origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  if (src_buffer->server != dst_buffer->server) return CL_INVALID_CONTEXT;
  request copying(opcode::copy_buffer_rect);
  if (cl_int status = put_command(copying, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  copying.object(src_buffer).object(dst_buffer);
  put_triple(copying, src_origin);
  put_triple(copying, dst_origin);
  put_triple(copying, region);
  copying.fields.put<std::uint64_t>(src_row_pitch)
      .put<std::uint64_t>(src_slice_pitch)
      .put<std::uint64_t>(dst_row_pitch)
      .put<std::uint64_t>(dst_slice_pitch);
  return send_command(copying, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadImage(
    cl_command_queue queue, cl_mem image, cl_bool blocking_read, const size_t* origin,
    const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(image) || image->element_size == 0) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  std::size_t row_bytes = region[0] * image->element_size;
  if (row_pitch == 0) row_pitch = row_bytes;
  if (slice_pitch == 0) slice_pitch = row_pitch * region[1];
  std::size_t packed_size = row_bytes * region[1] * region[2];
  if (packed_size > max_chunk) return CL_OUT_OF_RESOURCES;
  request reading(opcode::read_image);
  if (cl_int status = put_command(reading, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  reading.object(image);
  put_triple(reading, origin);
  put_triple(reading, region);
  return read_region(reading, queue, event, blocking_read != CL_FALSE, static_cast<std::byte*>(ptr),
                     row_pitch, slice_pitch, row_bytes, region[1], region[2]);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteImage(
    cl_command_queue queue, cl_mem image, cl_bool blocking_write, const size_t* origin,
    const size_t* region, size_t input_row_pitch, size_t input_slice_pitch, const void* ptr,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(image) || image->element_size == 0) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  std::size_t row_bytes = region[0] * image->element_size;
  if (input_row_pitch == 0) input_row_pitch = row_bytes;
  if (input_slice_pitch == 0) input_slice_pitch = input_row_pitch * region[1];
  std::size_t packed_size = row_bytes * region[1] * region[2];
  if (packed_size > max_chunk) return CL_OUT_OF_RESOURCES;
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  if (cl_int status = settle_overlap(
          *queue->server, ptr,
          region_span(input_row_pitch, input_slice_pitch, row_bytes, region[1], region[2]));
      status != CL_SUCCESS) {
    return status;
  }
  std::vector<std::byte> packed(packed_size);
  copy_region(static_cast<const std::byte*>(ptr), input_row_pitch, input_slice_pitch, packed.data(),
              row_bytes, row_bytes * region[1], row_bytes, region[1], region[2]);
  request writing(opcode::write_image);
  if (cl_int status = put_command(writing, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  writing.object(image);
  writing.fields.put<std::uint8_t>(blocking_write ? 1 : 0);
  put_triple(writing, origin);
  put_triple(writing, region);
  writing.fields.put_tail(packed.data(), packed.size());
  return blocking_write ? call_command(writing, queue, event) : send_command(writing, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue queue, cl_mem image,
                                                   const void* fill_color, const size_t* origin,
                                                   const size_t* region,
                                                   cl_uint num_events_in_wait_list,
                                                   const cl_event* event_wait_list,
                                                   cl_event* event) {
  if (!is_mem(image)) return CL_INVALID_MEM_OBJECT;
  if (fill_color == nullptr || origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  request filling(opcode::fill_image);
  if (cl_int status = put_command(filling, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  filling.object(image);
  filling.fields.put_bytes(fill_color, 16);  // four 32-bit channels, whatever the format
  put_triple(filling, origin);
  put_triple(filling, region);
  return send_command(filling, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue queue, cl_mem src_image,
                                                   cl_mem dst_image, const size_t* src_origin,
                                                   const size_t* dst_origin, const size_t* region,
                                                   cl_uint num_events_in_wait_list,
                                                   const cl_event* event_wait_list,
                                                   cl_event* event) {
  if (!is_mem(src_image) || !is_mem(dst_image)) return CL_INVALID_MEM_OBJECT;
  if (src_origin == nullptr || dst_origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  request copying(opcode::copy_image);
  if (cl_int status = put_command(copying, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  copying.object(src_image).object(dst_image);
  put_triple(copying, src_origin);
  put_triple(copying, dst_origin);
  put_triple(copying, region);
  return send_command(copying, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyImageToBuffer(
    cl_command_queue queue, cl_mem src_image, cl_mem dst_buffer, const size_t* src_origin,
    const size_t* region, size_t dst_offset, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(src_image) || !is_mem(dst_buffer)) return CL_INVALID_MEM_OBJECT;
  if (src_origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  request copying(opcode::copy_image_to_buffer);
  if (cl_int status = put_command(copying, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  copying.object(src_image).object(dst_buffer);
  put_triple(copying, src_origin);
  put_triple(copying, region);
  copying.fields.put<std::uint64_t>(dst_offset);
  return send_command(copying, queue, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferToImage(
    cl_command_queue queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset,
    const size_t* dst_origin, const size_t* region, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(src_buffer) || !is_mem(dst_image)) return CL_INVALID_MEM_OBJECT;
  if (dst_origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  request copying(opcode::copy_buffer_to_image);
  if (cl_int status = put_command(copying, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  copying.object(src_buffer).object(dst_image);
  copying.fields.put<std::uint64_t>(src_offset);
  put_triple(copying, dst_origin);
  put_triple(copying, region);
  return send_command(copying, queue, event);
}

CL_API_ENTRY void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer,
                                                  cl_bool blocking_map, cl_map_flags map_flags,
                                                  size_t offset, size_t size,
                                                  cl_uint num_events_in_wait_list,
                                                  const cl_event* event_wait_list, cl_event* event,
                                                  cl_int* errcode_ret) {
  if (!is_mem(buffer) || buffer->type != CL_MEM_OBJECT_BUFFER) {
    return fail(errcode_ret, CL_INVALID_MEM_OBJECT);
  }
  if (size == 0 || offset + size > buffer->size) return fail(errcode_ret, CL_INVALID_VALUE);
  // The mapped bytes live on this host: the buffer's host pointer, or memory of our own.
  _cl_mem::mapping mapped{offset, size, map_flags, buffer->host_pointer == nullptr, {}, {}, 0, 0};
  void* host = mapped.owned ? std::aligned_alloc(4096, (size + 4095) / 4096 * 4096)
                            : static_cast<char*>(buffer->host_pointer) + offset;
  if (host == nullptr) return fail(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  cl_int status = CL_SUCCESS;
  if ((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0) {
    status = clEnqueueMarkerWithWaitList(queue, num_events_in_wait_list, event_wait_list, event);
  } else {
    status = clEnqueueReadBuffer(queue, buffer, blocking_map, offset, size, host,
                                 num_events_in_wait_list, event_wait_list, event);
  }
  if (status != CL_SUCCESS) {
    if (mapped.owned) std::free(host);
    return fail(errcode_ret, status);
  }
  std::lock_guard lock(buffer->mutex);
  buffer->mappings[host] = mapped;
  succeed(errcode_ret);
  return host;
}

CL_API_ENTRY void* CL_API_CALL clEnqueueMapImage(cl_command_queue queue, cl_mem image,
                                                 cl_bool blocking_map, cl_map_flags map_flags,
                                                 const size_t* origin, const size_t* region,
                                                 size_t* image_row_pitch, size_t* image_slice_pitch,
                                                 cl_uint num_events_in_wait_list,
                                                 const cl_event* event_wait_list, cl_event* event,
                                                 cl_int* errcode_ret) {
  if (!is_mem(image) || image->element_size == 0) return fail(errcode_ret, CL_INVALID_MEM_OBJECT);
  if (origin == nullptr || region == nullptr || image_row_pitch == nullptr) {
    return fail(errcode_ret, CL_INVALID_VALUE);
  }
  _cl_mem::mapping mapped{};
  mapped.flags = map_flags;
  mapped.owned = true;
  std::copy(origin, origin + 3, mapped.origin);
  std::copy(region, region + 3, mapped.region);
  mapped.row_pitch = region[0] * image->element_size;
  mapped.slice_pitch = mapped.row_pitch * region[1];
  mapped.size = mapped.slice_pitch * region[2];
  void* host = std::aligned_alloc(4096, (mapped.size + 4095) / 4096 * 4096);
  if (host == nullptr) return fail(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  cl_int status =
      (map_flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0
          ? clEnqueueMarkerWithWaitList(queue, num_events_in_wait_list, event_wait_list, event)
          : clEnqueueReadImage(queue, image, blocking_map, origin, region, mapped.row_pitch,
                               mapped.slice_pitch, host, num_events_in_wait_list, event_wait_list,
                               event);
  if (status != CL_SUCCESS) {
    std::free(host);
    return fail(errcode_ret, status);
  }
  *image_row_pitch = mapped.row_pitch;
  if (image_slice_pitch != nullptr) *image_slice_pitch = region[2] > 1 ? mapped.slice_pitch : 0;
  std::lock_guard lock(image->mutex);
  image->mappings[host] = mapped;
  succeed(errcode_ret);
  return host;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue queue, cl_mem memobj,
                                                        void* mapped_ptr,
                                                        cl_uint num_events_in_wait_list,
                                                        const cl_event* event_wait_list,
                                                        cl_event* event) {
  if (!is_mem(memobj)) return CL_INVALID_MEM_OBJECT;
  _cl_mem::mapping mapped;
  {
    std::lock_guard lock(memobj->mutex);
    auto found = memobj->mappings.find(mapped_ptr);
    if (found == memobj->mappings.end()) return CL_INVALID_VALUE;
    mapped = found->second;
    memobj->mappings.erase(found);
  }
  cl_int status = CL_SUCCESS;
  if ((mapped.flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0) {
    // Sent before this returns, so the memory can be freed right after.
    status = memobj->type == CL_MEM_OBJECT_BUFFER
                 ? clEnqueueWriteBuffer(queue, memobj, CL_FALSE, mapped.offset, mapped.size,
                                        mapped_ptr, num_events_in_wait_list, event_wait_list, event)
                 : clEnqueueWriteImage(queue, memobj, CL_FALSE, mapped.origin, mapped.region,
                                       mapped.row_pitch, mapped.slice_pitch, mapped_ptr,
                                       num_events_in_wait_list, event_wait_list, event);
  } else {
    status = clEnqueueMarkerWithWaitList(queue, num_events_in_wait_list, event_wait_list, event);
  }
  if (mapped.owned) {
    // A non-blocking map's bytes may still be on their way into this memory.
    cl_int settled = settle_overlap(*memobj->server, mapped_ptr, mapped.size);
    if (status == CL_SUCCESS) status = settled;
    std::free(mapped_ptr);
  }
  return status;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMigrateMemObjects(
    cl_command_queue queue, cl_uint num_mem_objects, const cl_mem* mem_objects,
    cl_mem_migration_flags flags, cl_uint num_events_in_wait_list, const cl_event* event_wait_list,
    cl_event* event) {
  if (num_mem_objects == 0 || mem_objects == nullptr) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < num_mem_objects; ++i) {
    if (!is_mem(mem_objects[i])) return CL_INVALID_MEM_OBJECT;
  }
  request migrating(opcode::migrate_mem_objects);
  if (cl_int status =
          put_command(migrating, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  migrating.objects(mem_objects, num_mem_objects);
  migrating.fields.put<std::uint64_t>(flags);
  return send_command(migrating, queue, event);
}

}  // extern "C"
