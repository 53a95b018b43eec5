// Commands that move the bytes of images: reads, writes, fills, and copies between images
// and with buffers.
#include "remote/icd/api_support.hpp"
#include "remote/icd/image_checks.hpp"
#include "remote/icd/transfer_support.hpp"
#include "remote/protocol/rect_checks.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

// An image read's or write's region and host pitches, checked as OpenCL does at the call.
cl_int check_image_transfer(const _cl_mem& image, const std::size_t* origin,
                            const std::size_t* region, std::size_t row_pitch,
                            std::size_t slice_pitch) {
  if (cl_int status = check_image_region(image, origin, region); status != CL_SUCCESS) {
    return status;
  }
  return check_image_pitches(image, region, row_pitch, slice_pitch);
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadImage(
    cl_command_queue queue, cl_mem image, cl_bool blocking_read, const size_t* origin,
    const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(image) || image->element_size == 0) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || origin == nullptr || region == nullptr) return CL_INVALID_VALUE;
  if (cl_int status = check_image_transfer(*image, origin, region, row_pitch, slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
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
  if (cl_int status =
          check_image_transfer(*image, origin, region, input_row_pitch, input_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
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
  if (cl_int status = check_image_region(*image, origin, region); status != CL_SUCCESS) {
    return status;
  }
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
  // Checked here as OpenCL does at the call: the server would report it only later.
  if (src_image->format.image_channel_order != dst_image->format.image_channel_order ||
      src_image->format.image_channel_data_type != dst_image->format.image_channel_data_type) {
    return CL_IMAGE_FORMAT_MISMATCH;
  }
  if (cl_int status = check_image_region(*src_image, src_origin, region); status != CL_SUCCESS) {
    return status;
  }
  if (cl_int status = check_image_region(*dst_image, dst_origin, region); status != CL_SUCCESS) {
    return status;
  }
  if (src_image == dst_image && boxes_overlap(src_origin, dst_origin, region)) {
    return CL_MEM_COPY_OVERLAP;
  }
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
  if (cl_int status = check_image_region(*src_image, src_origin, region); status != CL_SUCCESS) {
    return status;
  }
  const std::size_t bytes = image_region_bytes(*src_image, region);
  if (dst_offset > dst_buffer->size || bytes > dst_buffer->size - dst_offset) {
    return CL_INVALID_VALUE;
  }
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
  if (cl_int status = check_image_region(*dst_image, dst_origin, region); status != CL_SUCCESS) {
    return status;
  }
  const std::size_t bytes = image_region_bytes(*dst_image, region);
  if (src_offset > src_buffer->size || bytes > src_buffer->size - src_offset) {
    return CL_INVALID_VALUE;
  }
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

}  // extern "C"
