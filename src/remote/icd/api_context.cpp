// Contexts and command queues.
#include "remote/icd/api_support.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

// Checks the properties and puts them with platform handles replaced by ids.
cl_int put_context_properties(request& creating, const cl_context_properties* properties,
                              server_connection*& server) {
  std::vector<std::int64_t> flat;
  if (properties != nullptr) {
    for (const auto* p = properties; *p != 0; p += 2) {
      if (p[0] == CL_CONTEXT_PLATFORM) {
        auto platform = reinterpret_cast<cl_platform_id>(p[1]);
        if (!valid(platform, object_kind::platform)) return CL_INVALID_PLATFORM;
        if (server != nullptr && server != platform->server) return CL_INVALID_PLATFORM;
        server = platform->server;
        flat.push_back(p[0]);
        flat.push_back(static_cast<std::int64_t>(platform->id));
      } else if (p[0] == CL_CONTEXT_INTEROP_USER_SYNC) {
        flat.push_back(p[0]);
        flat.push_back(p[1]);
      } else {
        return CL_INVALID_PROPERTY;  // GL, D3D and other sharing cannot cross hosts
      }
      if (flat.size() > 60) return CL_INVALID_PROPERTY;
    }
    flat.push_back(0);
  }
  creating.fields.put_array<std::int64_t>(flat);
  return CL_SUCCESS;
}

std::vector<cl_context_properties> copy_properties(const cl_context_properties* properties) {
  std::vector<cl_context_properties> copy;
  if (properties == nullptr) return copy;
  for (const auto* p = properties; *p != 0; p += 2) {
    copy.push_back(p[0]);
    copy.push_back(p[1]);
  }
  copy.push_back(0);
  return copy;
}

cl_context finish_context(request& creating, server_connection& server,
                          const cl_context_properties* properties, std::uint64_t id,
                          cl_int* errcode_ret) {
  reply answer;
  if (cl_int status = creating.call(server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* context = new _cl_context(object_kind::context, &server, id);
  context->properties = copy_properties(properties);
  server.register_object(context);
  succeed(errcode_ret);
  return context;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_context CL_API_CALL clCreateContext(
    const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,
    void(CL_CALLBACK* /*pfn_notify*/)(const char*, const void*, size_t, void*), void* /*user_data*/,
    cl_int* errcode_ret) {
  if (num_devices == 0 || devices == nullptr) return fail(errcode_ret, CL_INVALID_VALUE);
  server_connection* server = nullptr;
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (!valid(devices[i], object_kind::device)) return fail(errcode_ret, CL_INVALID_DEVICE);
    if (server != nullptr && devices[i]->server != server) {
      return fail(errcode_ret, CL_INVALID_DEVICE);  // a context lives on one server
    }
    server = devices[i]->server;
  }
  request creating(opcode::create_context);
  std::uint64_t id = server->new_id();
  creating.fields.put<std::uint64_t>(id);
  if (cl_int status = put_context_properties(creating, properties, server); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  if (server != devices[0]->server) return fail(errcode_ret, CL_INVALID_PLATFORM);
  creating.objects(devices, num_devices);
  return finish_context(creating, *server, properties, id, errcode_ret);
}

CL_API_ENTRY cl_context CL_API_CALL
clCreateContextFromType(const cl_context_properties* properties, cl_device_type device_type,
                        void(CL_CALLBACK* /*pfn_notify*/)(const char*, const void*, size_t, void*),
                        void* /*user_data*/, cl_int* errcode_ret) {
  // The loader routes here by the CL_CONTEXT_PLATFORM property, or to its first platform.
  server_connection* server = nullptr;
  for (const auto* p = properties; p != nullptr && *p != 0; p += 2) {
    if (p[0] == CL_CONTEXT_PLATFORM) {
      auto platform = reinterpret_cast<cl_platform_id>(p[1]);
      if (!valid(platform, object_kind::platform)) return fail(errcode_ret, CL_INVALID_PLATFORM);
      server = platform->server;
    }
  }
  if (server == nullptr) {
    const auto& found = discovered_platforms();
    if (found.empty()) return fail(errcode_ret, CL_INVALID_PLATFORM);
    server = found.front()->server;
  }
  request creating(opcode::create_context_from_type);
  std::uint64_t id = server->new_id();
  creating.fields.put<std::uint64_t>(id);
  if (cl_int status = put_context_properties(creating, properties, server); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  creating.fields.put<std::uint64_t>(device_type);
  return finish_context(creating, *server, properties, id, errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainContext(cl_context context) {
  if (!valid(context, object_kind::context)) return CL_INVALID_CONTEXT;
  ++context->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseContext(cl_context context) {
  if (!valid(context, object_kind::context)) return CL_INVALID_CONTEXT;
  release_object(context);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetContextInfo(cl_context context, cl_context_info param_name,
                                                 size_t param_value_size, void* param_value,
                                                 size_t* param_value_size_ret) {
  if (!valid(context, object_kind::context)) return CL_INVALID_CONTEXT;
  switch (param_name) {
    case CL_CONTEXT_REFERENCE_COUNT: {
      auto count = static_cast<cl_uint>(context->references.load());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    case CL_CONTEXT_PROPERTIES:
      return copy_info(context->properties.data(),
                       context->properties.size() * sizeof(cl_context_properties), param_value_size,
                       param_value, param_value_size_ret);
    default:
      return forward_info(info_query::context, context, param_name, 0, param_value_size,
                          param_value, param_value_size_ret);
  }
}

CL_API_ENTRY cl_command_queue CL_API_CALL
clCreateCommandQueue(cl_context context, cl_device_id device,
                     cl_command_queue_properties properties, cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (!valid(device, object_kind::device) || device->server != context->server) {
    return fail(errcode_ret, CL_INVALID_DEVICE);
  }
  request creating(opcode::create_queue);
  std::uint64_t id = context->server->new_id();
  creating.fields.put<std::uint64_t>(id);
  creating.object(context).object(device);
  creating.fields.put<std::uint64_t>(properties);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* queue = new _cl_command_queue(object_kind::queue, context->server, id);
  queue->context = context;
  hold_parent(queue, context);
  queue->device = device;
  queue->in_order = (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
  context->server->register_object(queue);
  succeed(errcode_ret);
  return queue;
}

// OpenCL 2.0's form, which programs use when a platform's headers are new: only the 1.2
// properties are accepted.
CL_API_ENTRY cl_command_queue CL_API_CALL
clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                   const cl_queue_properties* properties, cl_int* errcode_ret) {
  cl_command_queue_properties flags = 0;
  for (const auto* p = properties; p != nullptr && *p != 0; p += 2) {
    if (p[0] != CL_QUEUE_PROPERTIES) return fail(errcode_ret, CL_INVALID_QUEUE_PROPERTIES);
    flags = static_cast<cl_command_queue_properties>(p[1]);
  }
  return clCreateCommandQueue(context, device, flags, errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainCommandQueue(cl_command_queue queue) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  ++queue->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue queue) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  // OpenCL flushes a queue when its last reference goes.
  if (queue->references.load() == 1) clFlush(queue);
  release_object(queue);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue queue,
                                                      cl_command_queue_info param_name,
                                                      size_t param_value_size, void* param_value,
                                                      size_t* param_value_size_ret) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  switch (param_name) {
    case CL_QUEUE_CONTEXT:
      return copy_value_info(queue->context, param_value_size, param_value, param_value_size_ret);
    case CL_QUEUE_DEVICE:
      return copy_value_info(queue->device, param_value_size, param_value, param_value_size_ret);
    case CL_QUEUE_REFERENCE_COUNT: {
      auto count = static_cast<cl_uint>(queue->references.load());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    default:
      return forward_info(info_query::queue, queue, param_name, 0, param_value_size, param_value,
                          param_value_size_ret);
  }
}

CL_API_ENTRY cl_int CL_API_CALL clSetCommandQueueProperty(cl_command_queue queue,
                                                          cl_command_queue_properties, cl_bool,
                                                          cl_command_queue_properties*) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  return CL_INVALID_OPERATION;  // deprecated since OpenCL 1.1
}

}  // extern "C"
