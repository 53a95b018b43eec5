// Helpers shared by the ICD's entry points: argument checks, info values, errors.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "remote/icd/objects.hpp"
#include "remote/icd/request.hpp"
#include "remote/icd/server_connection.hpp"
#include "remote/protocol/info_handles.hpp"

namespace troupe::remote::icd {

/// True when `handle` is a non-null object of this driver of kind `kind`.
template <class Handle>
bool valid(Handle handle, object_kind kind) {
  return handle != nullptr && handle->kind == kind;
}

/// Sets *errcode_ret (when given) and returns `value` (a null handle, usually).
template <class T = std::nullptr_t>
T fail(cl_int* errcode_ret, cl_int code, T value = nullptr) {
  if (errcode_ret != nullptr) *errcode_ret = code;
  return value;
}

inline void succeed(cl_int* errcode_ret) {
  if (errcode_ret != nullptr) *errcode_ret = CL_SUCCESS;
}

/// Copies an info value by OpenCL's rules (size query, too small a buffer).
inline cl_int copy_info(const void* value, std::size_t size, std::size_t param_value_size,
                        void* param_value, std::size_t* param_value_size_ret) {
  if (param_value != nullptr) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    if (size > 0) std::memcpy(param_value, value, size);
  }
  if (param_value_size_ret != nullptr) *param_value_size_ret = size;
  return CL_SUCCESS;
}
inline cl_int copy_string_info(const std::string& text, std::size_t param_value_size,
                               void* param_value, std::size_t* param_value_size_ret) {
  return copy_info(text.c_str(), text.size() + 1, param_value_size, param_value,
                   param_value_size_ret);
}
template <class T>
cl_int copy_value_info(const T& value, std::size_t param_value_size, void* param_value,
                       std::size_t* param_value_size_ret) {
  return copy_info(&value, sizeof value, param_value_size, param_value, param_value_size_ret);
}

/// The flags by which a memory object is made from host memory.
inline constexpr cl_mem_flags host_pointer_flags = CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR;

/// True when `memory` is a memory object of this driver.
inline bool is_mem(cl_mem memory) {
  return valid(memory, object_kind::mem);
}

/// Registers a new memory object with its server; sets *errcode_ret and returns it.
inline cl_mem register_mem(_cl_mem* memory, cl_int* errcode_ret) {
  memory->server->register_object(memory);
  succeed(errcode_ret);
  return memory;
}

/// A blocking read or write of `buffer` on a temporary queue of its context's first device, for
/// transfers that have no queue of their own (large initial contents, copies between servers).
cl_int transfer_on_own_queue(cl_mem buffer, bool write, std::size_t offset, std::size_t size,
                             void* host);

/// Fetches a whole info value from the server: raw bytes, with handles already turned into
/// this driver's objects. Returns the status of the query.
cl_int fetch_info(info_query query, const remote_object* subject, cl_uint param,
                  std::uint64_t extra, std::vector<std::byte>& value);

/// fetch_info() and copy_info() in one.
cl_int forward_info(info_query query, const remote_object* subject, cl_uint param,
                    std::uint64_t extra, std::size_t param_value_size, void* param_value,
                    std::size_t* param_value_size_ret);

/// The command header every enqueue starts with: queue, wait list, the new event's id.
/// Returns CL_SUCCESS or the error of an invalid wait list. `event` gets the new event.
cl_int put_command(request& command, cl_command_queue queue, cl_uint num_events,
                   const cl_event* wait_list, cl_event* event);

/// Sends a command without waiting (pipelined); on failure drops the event it created.
cl_int send_command(request& command, cl_command_queue queue, cl_event* event);

/// Sends a command and waits for it; bulk reply bytes land in `bulk`.
cl_int call_command(request& command, cl_command_queue queue, cl_event* event, void* bulk = nullptr,
                    std::size_t bulk_size = 0);

/// Sends a read the server answers once it completes; its bytes land as `landing` says (the
/// queue and order of issue are filled in here) when a thread next needs them: settle_*().
cl_int send_read(request& command, cl_command_queue queue, cl_event* event, pending_read landing);

// Non-blocking reads put their bytes in place when something needs them: OpenCL says the
// memory holds the data once the read's event is complete, which the application learns from
// a finish, a wait, an event's status or callback, or a later blocking command on the queue.
// Each of those settles the reads it implies; each returns CL_SUCCESS or why the bytes are lost.

/// Every read of `queue` (clFinish).
cl_int settle_queue(cl_command_queue queue);
/// The reads over once `event` is complete (waits, status queries, callbacks).
cl_int settle_event(cl_event event);
/// The reads into [host, host + size) of any queue of this server: a write from there sends
/// the bytes now, so a read the write waits for must have landed first.
cl_int settle_overlap(server_connection& server, const void* host, std::size_t size);

/// The platforms of every server reached at discovery (clIcdGetPlatformIDsKHR), in order.
const std::vector<cl_platform_id>& discovered_platforms();

/// Rewrites "OpenCL X.Y ..." so that X.Y is at most 1.2, the version this driver implements.
std::string cap_version(const std::string& version, const char* prefix);

}  // namespace troupe::remote::icd
