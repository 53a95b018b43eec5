// Commands that move the bytes of buffers: reads, writes, fills, copies and migrations.
#include <algorithm>

#include "remote/icd/api_support.hpp"
#include "remote/icd/striped_transfer.hpp"
#include "remote/icd/transfer_support.hpp"
#include "remote/protocol/rect_checks.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

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

// What OpenCL checks at the call of a rect read or write (the server would report it only
// later); the host pitches come back resolved (0: packed).
cl_int check_rect_transfer(cl_mem buffer, const void* ptr, const size_t* buffer_origin,
                           const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
                           size_t buffer_slice_pitch, size_t& host_row_pitch,
                           size_t& host_slice_pitch) {
  if (ptr == nullptr || buffer_origin == nullptr || host_origin == nullptr || region == nullptr) {
    return CL_INVALID_VALUE;
  }
  if (cl_int status = check_buffer_rect(buffer->size, buffer_origin, region, buffer_row_pitch,
                                        buffer_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
  if (cl_int status = check_rect_pitches(region, host_row_pitch, host_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
  if (host_row_pitch == 0) host_row_pitch = region[0];
  if (host_slice_pitch == 0) host_slice_pitch = region[1] * host_row_pitch;
  return region[0] * region[1] * region[2] > max_chunk ? CL_OUT_OF_RESOURCES : CL_SUCCESS;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(
    cl_command_queue queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size,
    void* ptr, cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (!is_mem(buffer)) return CL_INVALID_MEM_OBJECT;
  if (ptr == nullptr || size == 0) return CL_INVALID_VALUE;
  if (blocking_read) {
    std::size_t stripes =
        stripe_count(queue, buffer, size, num_events_in_wait_list, event_wait_list);
    if (stripes > 1) {
      return striped_read(queue, buffer, offset, size, ptr, num_events_in_wait_list,
                          event_wait_list, event, stripes);
    }
  }
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
  if (std::size_t stripes =
          stripe_count(queue, buffer, size, num_events_in_wait_list, event_wait_list);
      stripes > 1) {
    return striped_write(queue, buffer, blocking_write != CL_FALSE, offset, size, ptr,
                         num_events_in_wait_list, event_wait_list, event, stripes);
  }
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
  if (cl_int status =
          check_rect_transfer(buffer, ptr, buffer_origin, host_origin, region, buffer_row_pitch,
                              buffer_slice_pitch, host_row_pitch, host_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
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
  if (cl_int status =
          check_rect_transfer(buffer, ptr, buffer_origin, host_origin, region, buffer_row_pitch,
                              buffer_slice_pitch, host_row_pitch, host_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
  std::vector<std::byte> packed(region[0] * region[1] * region[2]);
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
  // Checked here as OpenCL does at the call: the server would report it only later.
  const bool power_of_two = pattern_size != 0 && (pattern_size & (pattern_size - 1)) == 0;
  if (pattern == nullptr || !power_of_two || pattern_size > 128 || offset % pattern_size != 0 ||
      size % pattern_size != 0 || offset > buffer->size || size > buffer->size - offset) {
    return CL_INVALID_VALUE;
  }
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
  // Checked here as OpenCL does at the call: the server would report it only later.
  if (cl_int status =
          check_buffer_rect(src_buffer->size, src_origin, region, src_row_pitch, src_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
  if (cl_int status =
          check_buffer_rect(dst_buffer->size, dst_origin, region, dst_row_pitch, dst_slice_pitch);
      status != CL_SUCCESS) {
    return status;
  }
  if (src_buffer == dst_buffer &&
      rects_overlap(src_origin, dst_origin, region, src_row_pitch, src_slice_pitch)) {
    return CL_MEM_COPY_OVERLAP;
  }
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
