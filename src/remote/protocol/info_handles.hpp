// Which clGet*Info parameters return OpenCL handles. Those cross the wire as ids and are turned
// back into the client's objects; every other value crosses as raw bytes.
#pragma once

#include <CL/cl.h>

#include "remote/protocol/opcode.hpp"

namespace troupe::remote {

/// The kind of handle (or array of handles) that `param` of `query` returns, or none.
constexpr object_kind info_handle_kind(info_query query, cl_uint param) noexcept {
  switch (query) {
    case info_query::device:
      if (param == CL_DEVICE_PLATFORM) return object_kind::platform;
      if (param == CL_DEVICE_PARENT_DEVICE) return object_kind::device;
      break;
    case info_query::context:
      if (param == CL_CONTEXT_DEVICES) return object_kind::device;
      break;
    case info_query::queue:
      if (param == CL_QUEUE_CONTEXT) return object_kind::context;
      if (param == CL_QUEUE_DEVICE) return object_kind::device;
      break;
    case info_query::mem:
      if (param == CL_MEM_CONTEXT) return object_kind::context;
      if (param == CL_MEM_ASSOCIATED_MEMOBJECT) return object_kind::mem;
      break;
    case info_query::image:
      if (param == CL_IMAGE_BUFFER) return object_kind::mem;
      break;
    case info_query::sampler:
      if (param == CL_SAMPLER_CONTEXT) return object_kind::context;
      break;
    case info_query::program:
      if (param == CL_PROGRAM_CONTEXT) return object_kind::context;
      if (param == CL_PROGRAM_DEVICES) return object_kind::device;
      break;
    case info_query::kernel:
      if (param == CL_KERNEL_CONTEXT) return object_kind::context;
      if (param == CL_KERNEL_PROGRAM) return object_kind::program;
      break;
    case info_query::event:
      if (param == CL_EVENT_COMMAND_QUEUE) return object_kind::queue;
      if (param == CL_EVENT_CONTEXT) return object_kind::context;
      break;
    default:
      break;
  }
  return object_kind::none;
}

/// The kind of object whose id a get_info frame of `query` carries first.
constexpr object_kind info_subject_kind(info_query query) noexcept {
  switch (query) {
    case info_query::platform:
      return object_kind::platform;
    case info_query::device:
      return object_kind::device;
    case info_query::context:
      return object_kind::context;
    case info_query::queue:
      return object_kind::queue;
    case info_query::mem:
    case info_query::image:
      return object_kind::mem;
    case info_query::sampler:
      return object_kind::sampler;
    case info_query::program:
    case info_query::program_build:
      return object_kind::program;
    case info_query::kernel:
    case info_query::kernel_work_group:
    case info_query::kernel_arg:
      return object_kind::kernel;
    case info_query::event:
    case info_query::event_profiling:
      return object_kind::event;
  }
  return object_kind::none;
}

}  // namespace troupe::remote
