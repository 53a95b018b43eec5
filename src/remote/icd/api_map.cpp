// Mapping buffers and images into host memory, and unmapping them.
#include <algorithm>
#include <cstdlib>

#include "remote/icd/api_support.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

// Whether a map need not read the bytes: invalidated for writing, and not read too (which PoCL
// accepts, and then reads).
bool invalidates(cl_map_flags flags) {
  return (flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0 && (flags & CL_MAP_READ) == 0;
}

}  // namespace

extern "C" {

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
  if (invalidates(map_flags)) {
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
  buffer->mappings.emplace(host, mapped);
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
  // OpenCL gives 3D images and arrays a slice pitch, however few slices a map covers, and the
  // others none.
  const bool one_d_array = image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  const bool sliced = one_d_array || image->type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                      image->type == CL_MEM_OBJECT_IMAGE3D;
  if (origin == nullptr || region == nullptr || image_row_pitch == nullptr ||
      (sliced && image_slice_pitch == nullptr)) {
    return fail(errcode_ret, CL_INVALID_VALUE);
  }
  _cl_mem::mapping mapped{};
  mapped.flags = map_flags;
  mapped.owned = true;
  std::copy(origin, origin + 3, mapped.origin);
  std::copy(region, region + 3, mapped.region);
  // Packed in memory of our own: a 1D array's slices are its images, region[1] of them, one row
  // each; the others' slices are region[1] rows, region[2] of them.
  mapped.row_pitch = region[0] * image->element_size;
  mapped.slice_pitch = one_d_array ? mapped.row_pitch : mapped.row_pitch * region[1];
  mapped.size = mapped.slice_pitch * (one_d_array ? region[1] : region[2]);
  void* host = std::aligned_alloc(4096, (mapped.size + 4095) / 4096 * 4096);
  if (host == nullptr) return fail(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  cl_int status =
      invalidates(map_flags)
          ? clEnqueueMarkerWithWaitList(queue, num_events_in_wait_list, event_wait_list, event)
          : clEnqueueReadImage(queue, image, blocking_map, origin, region, mapped.row_pitch,
                               mapped.slice_pitch, host, num_events_in_wait_list, event_wait_list,
                               event);
  if (status != CL_SUCCESS) {
    std::free(host);
    return fail(errcode_ret, status);
  }
  *image_row_pitch = mapped.row_pitch;
  if (image_slice_pitch != nullptr) *image_slice_pitch = sliced ? mapped.slice_pitch : 0;
  std::lock_guard lock(image->mutex);
  image->mappings.emplace(host, mapped);
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

}  // extern "C"
