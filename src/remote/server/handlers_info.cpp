// Every clGet*Info call: raw bytes, or handles turned into this session's ids.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "remote/protocol/info_handles.hpp"
#include "remote/server/handlers.hpp"

namespace troupe::remote::server {

namespace {

// A build the server refused (handlers_programs.cpp) reports the refusal as its log and fails
// as a build does: OpenCL's own answers would tell of the build before it.
std::optional<std::vector<std::byte>> refused_build_info(cl_object& program, cl_uint param) {
  if (param != CL_PROGRAM_BUILD_LOG && param != CL_PROGRAM_BUILD_STATUS) return std::nullopt;
  std::lock_guard lock(program.cache_mutex);
  const std::string& log = program.refused_build_log;
  if (log.empty()) return std::nullopt;
  if (param == CL_PROGRAM_BUILD_STATUS) {
    cl_build_status status = CL_BUILD_ERROR;
    auto bytes = reinterpret_cast<const std::byte*>(&status);
    return std::vector<std::byte>(bytes, bytes + sizeof status);
  }
  auto bytes = reinterpret_cast<const std::byte*>(log.c_str());
  return std::vector<std::byte>(bytes, bytes + log.size() + 1);
}

// Calls the clGet*Info function of `query` once for the size and once for the value.
std::vector<std::byte> query_info(call& c, info_query query, cl_uint param) {
  object_kind kind = info_subject_kind(query);
  auto subject_id = c.in.get<std::uint64_t>();
  auto extra = c.in.get<std::uint64_t>();
  void* subject = nullptr;
  constexpr cl_int invalid_for[object_kind_count] = {
      CL_INVALID_VALUE,         CL_INVALID_PLATFORM,   CL_INVALID_DEVICE,  CL_INVALID_CONTEXT,
      CL_INVALID_COMMAND_QUEUE, CL_INVALID_MEM_OBJECT, CL_INVALID_SAMPLER, CL_INVALID_PROGRAM,
      CL_INVALID_KERNEL,        CL_INVALID_EVENT};
  subject = c.object_by_id<void*>(subject_id, kind, invalid_for[static_cast<int>(kind)]);
  cl_object& subject_object = *c.held.back();
  cl_device_id device = nullptr;
  if (query == info_query::program_build ||
      (query == info_query::kernel_work_group && extra != 0)) {
    device = c.object_by_id<cl_device_id>(extra, object_kind::device, CL_INVALID_DEVICE);
  }
  if (query == info_query::program_build) {
    if (auto refused = refused_build_info(subject_object, param)) return std::move(*refused);
  }
  auto get = [&](std::size_t size, void* value, std::size_t* size_ret) -> cl_int {
    switch (query) {
      case info_query::platform:
        return clGetPlatformInfo(static_cast<cl_platform_id>(subject), param, size, value,
                                 size_ret);
      case info_query::device:
        return clGetDeviceInfo(static_cast<cl_device_id>(subject), param, size, value, size_ret);
      case info_query::context:
        return clGetContextInfo(static_cast<cl_context>(subject), param, size, value, size_ret);
      case info_query::queue:
        return clGetCommandQueueInfo(static_cast<cl_command_queue>(subject), param, size, value,
                                     size_ret);
      case info_query::mem:
        return clGetMemObjectInfo(static_cast<cl_mem>(subject), param, size, value, size_ret);
      case info_query::image:
        return clGetImageInfo(static_cast<cl_mem>(subject), param, size, value, size_ret);
      case info_query::sampler:
        return clGetSamplerInfo(static_cast<cl_sampler>(subject), param, size, value, size_ret);
      case info_query::program:
        return clGetProgramInfo(static_cast<cl_program>(subject), param, size, value, size_ret);
      case info_query::program_build:
        return clGetProgramBuildInfo(static_cast<cl_program>(subject), device, param, size, value,
                                     size_ret);
      case info_query::kernel:
        return clGetKernelInfo(static_cast<cl_kernel>(subject), param, size, value, size_ret);
      case info_query::kernel_work_group:
        return clGetKernelWorkGroupInfo(static_cast<cl_kernel>(subject), device, param, size, value,
                                        size_ret);
      case info_query::kernel_arg:
        if (extra > 0xffffffffu) return CL_INVALID_ARG_INDEX;
        return clGetKernelArgInfo(static_cast<cl_kernel>(subject), static_cast<cl_uint>(extra),
                                  param, size, value, size_ret);
      case info_query::event:
        return clGetEventInfo(static_cast<cl_event>(subject), param, size, value, size_ret);
      case info_query::event_profiling:
        return clGetEventProfilingInfo(static_cast<cl_event>(subject), param, size, value,
                                       size_ret);
    }
    return CL_INVALID_VALUE;
  };
  std::size_t size = 0;
  check(get(0, nullptr, &size), "clGet*Info (size)");
  if (size > max_chunk) throw cl_failure{CL_OUT_OF_RESOURCES, "info value over one chunk"};
  std::vector<std::byte> value(size);
  if (size > 0) check(get(size, value.data(), nullptr), "clGet*Info");
  return value;
}

}  // namespace

void handlers::get_info(call& c) {
  auto raw_query = c.in.get<std::uint8_t>();
  if (raw_query < 1 || raw_query > static_cast<std::uint8_t>(info_query::event_profiling)) {
    throw decode_error("get_info for query " + std::to_string(raw_query));
  }
  auto query = static_cast<info_query>(raw_query);
  auto param = c.in.get<std::uint32_t>();
  if (query == info_query::program && param == CL_PROGRAM_BINARIES) {
    // An array of pointers into the caller's memory: sent as the binaries themselves.
    auto subject_id = c.in.get<std::uint64_t>();
    c.in.get<std::uint64_t>();
    auto program = c.object_by_id<cl_program>(subject_id, object_kind::program, CL_INVALID_PROGRAM);
    cl_uint count = 0;
    check(clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr),
          "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)");
    std::vector<std::size_t> sizes(count);
    check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizes.size() * sizeof(std::size_t),
                           sizes.data(), nullptr),
          "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
    std::vector<std::vector<unsigned char>> binaries(count);
    std::vector<unsigned char*> pointers(count);
    for (cl_uint i = 0; i < count; ++i) {
      binaries[i].resize(sizes[i]);
      pointers[i] = binaries[i].data();
    }
    check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, pointers.size() * sizeof(void*),
                           pointers.data(), nullptr),
          "clGetProgramInfo(CL_PROGRAM_BINARIES)");
    c.out.put<std::uint8_t>(2);
    c.out.put<std::uint32_t>(count);
    for (auto& binary : binaries) c.out.put_bytes(binary.data(), binary.size());
    return;
  }
  auto value = query_info(c, query, param);
  object_kind kind = info_handle_kind(query, param);
  if (kind == object_kind::none) {
    c.out.put<std::uint8_t>(0);
    c.out.put_bytes(value.data(), value.size());
    return;
  }
  if (value.size() % sizeof(void*) != 0) {
    throw cl_failure{CL_INVALID_VALUE,
                     "handle-valued info of " + std::to_string(value.size()) + " bytes"};
  }
  std::vector<std::uint64_t> ids(value.size() / sizeof(void*));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    void* handle = nullptr;
    std::memcpy(&handle, value.data() + i * sizeof(void*), sizeof handle);
    ids[i] = c.owner.id_for(kind, handle);
  }
  c.out.put<std::uint8_t>(1);
  c.out.put<std::uint8_t>(static_cast<std::uint8_t>(kind));
  c.out.put_array<std::uint64_t>(ids);
}

}  // namespace troupe::remote::server
