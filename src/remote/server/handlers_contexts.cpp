// Platforms, devices, contexts and queues: listing, creating, flushing and finishing them.
#include <CL/cl_ext.h>

#include <string>
#include <vector>

#include "remote/server/handlers.hpp"

namespace troupe::remote::server {

namespace {

// Context properties arrive with platform ids in place of handles.
std::vector<cl_context_properties> context_properties(call& c) {
  auto raw = c.in.get_array<std::int64_t>(64);
  if (raw.empty()) return {};
  if (raw.size() % 2 != 1 || raw.back() != 0) {
    throw cl_failure{CL_INVALID_PROPERTY,
                     "context properties are not a zero-terminated list of "
                     "name/value pairs"};
  }
  std::vector<cl_context_properties> properties(raw.begin(), raw.end());
  for (std::size_t i = 0; i + 1 < properties.size(); i += 2) {
    if (properties[i] == CL_CONTEXT_PLATFORM) {
      auto platform = c.object_by_id<cl_platform_id>(static_cast<std::uint64_t>(properties[i + 1]),
                                                     object_kind::platform, CL_INVALID_PLATFORM);
      properties[i + 1] = reinterpret_cast<cl_context_properties>(platform);
    } else if (properties[i] != CL_CONTEXT_INTEROP_USER_SYNC) {
      throw cl_failure{CL_INVALID_PROPERTY, "context property " + std::to_string(properties[i]) +
                                                " cannot be used remotely"};
    }
  }
  return properties;
}

const cl_context_properties* or_null(const std::vector<cl_context_properties>& properties) {
  return properties.empty() ? nullptr : properties.data();
}

}  // namespace

namespace handlers {

void get_platforms(call& c) {
  cl_uint count = 0;
  check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<std::uint64_t> ids;
  for (auto platform : platforms) {
    // A host with troupe's ICD installed sees remote platforms too: serving them again
    // would loop requests between servers.
    char suffix[64] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix - 1, suffix, nullptr);
    if (std::string(suffix) == "troupe") continue;
    ids.push_back(c.owner.id_for(object_kind::platform, platform));
  }
  c.out.put_array<std::uint64_t>(ids);
}

void get_device_ids(call& c) {
  auto platform = c.object<cl_platform_id>(object_kind::platform, CL_INVALID_PLATFORM);
  auto type = c.in.get<std::uint64_t>();
  cl_uint count = 0;
  check(clGetDeviceIDs(platform, type, 0, nullptr, &count), "clGetDeviceIDs");
  std::vector<cl_device_id> found(count);
  check(clGetDeviceIDs(platform, type, count, found.data(), nullptr), "clGetDeviceIDs");
  std::vector<std::uint64_t> ids;
  for (auto device : found) ids.push_back(c.owner.id_for(object_kind::device, device));
  c.out.put_array<std::uint64_t>(ids);
}

void create_sub_devices(call& c) {
  auto device = c.object<cl_device_id>(object_kind::device, CL_INVALID_DEVICE);
  auto raw = c.in.get_array<std::int64_t>(64);
  std::vector<cl_device_partition_property> properties(raw.begin(), raw.end());
  // The client sends the list up to its first 0, which for BY_COUNTS is the counts' LIST_END
  // (also 0): restore both it and the list's terminator. Elsewhere the second 0 is unread.
  properties.push_back(CL_DEVICE_PARTITION_BY_COUNTS_LIST_END);
  properties.push_back(0);
  cl_uint count = 0;
  check(clCreateSubDevices(device, properties.data(), 0, nullptr, &count), "clCreateSubDevices");
  std::vector<cl_device_id> created(count);
  check(clCreateSubDevices(device, properties.data(), count, created.data(), nullptr),
        "clCreateSubDevices");
  c.out.put_array<std::uint64_t>(c.adopt_all(object_kind::device, created));
}

void create_context(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto properties = context_properties(c);
  auto listed = c.devices();
  cl_context context = clCreateContext(or_null(properties), static_cast<cl_uint>(listed.size()),
                                       listed.data(), nullptr, nullptr, &status);
  check(status, "clCreateContext");
  c.owner.add(id, object_kind::context, context);
}

void create_context_from_type(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto properties = context_properties(c);
  auto type = c.in.get<std::uint64_t>();
  cl_context context =
      clCreateContextFromType(or_null(properties), type, nullptr, nullptr, &status);
  check(status, "clCreateContextFromType");
  c.owner.add(id, object_kind::context, context);
}

void create_queue(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto device = c.object<cl_device_id>(object_kind::device, CL_INVALID_DEVICE);
  auto properties = c.in.get<std::uint64_t>();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  cl_command_queue queue = clCreateCommandQueue(context, device, properties, &status);
#pragma GCC diagnostic pop
  check(status, "clCreateCommandQueue");
  c.owner.add(id, object_kind::queue, queue);
}

void flush(call& c) {
  check(clFlush(c.object<cl_command_queue>(object_kind::queue, CL_INVALID_COMMAND_QUEUE)),
        "clFlush");
}

void finish(call& c) {
  check(clFinish(c.object<cl_command_queue>(object_kind::queue, CL_INVALID_COMMAND_QUEUE)),
        "clFinish");
}

}  // namespace handlers

}  // namespace troupe::remote::server
