// Buffers, and what every memory object has: references, destructor callbacks, info.
#include "remote/icd/api_support.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

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

}  // extern "C"
