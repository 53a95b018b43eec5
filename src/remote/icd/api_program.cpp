// Programs and kernels.
#include "remote/icd/api_support.hpp"
#include "remote/icd/client_includes.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

cl_program new_program(cl_context context, std::uint64_t id, cl_int* errcode_ret) {
  auto* program = new _cl_program(object_kind::program, context->server, id);
  program->context = context;
  hold_parent(program, context);
  context->server->register_object(program);
  succeed(errcode_ret);
  return program;
}

bool valid_device_list(const server_connection* server, cl_uint num_devices,
                       const cl_device_id* devices) {
  if ((num_devices == 0) != (devices == nullptr)) return false;
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (!valid(devices[i], object_kind::device) || devices[i]->server != server) return false;
  }
  return true;
}

// The options without -I, then the files the sources include from the -I folders
// (client_includes.hpp), as build_program and compile_program read them.
void put_options_and_includes(request& to, const char* options,
                              const std::vector<std::string_view>& sources) {
  auto includes = gather_client_includes(options != nullptr ? options : "", sources);
  to.fields.put_string(includes.options);
  to.fields.put<std::uint8_t>(includes.over_limit ? 1 : 0);
  to.fields.put<std::uint32_t>(static_cast<std::uint32_t>(includes.folders.size()));
  for (const auto& folder : includes.folders) {
    to.fields.put<std::uint32_t>(static_cast<std::uint32_t>(folder.size()));
    for (const auto& [name, contents] : folder) to.fields.put_string(name).put_string(contents);
  }
}

// OpenCL lets a build callback run on another thread; here it runs once the reply is in.
using build_callback = void(CL_CALLBACK*)(cl_program, void*);

}  // namespace

extern "C" {

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithSource(cl_context context, cl_uint count,
                                                              const char** strings,
                                                              const size_t* lengths,
                                                              cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (count == 0 || strings == nullptr) return fail(errcode_ret, CL_INVALID_VALUE);
  std::string source;
  for (cl_uint i = 0; i < count; ++i) {
    if (strings[i] == nullptr) return fail(errcode_ret, CL_INVALID_VALUE);
    if (lengths != nullptr && lengths[i] != 0) {
      source.append(strings[i], lengths[i]);
    } else {
      source.append(strings[i]);
    }
  }
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_program_with_source);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  creating.fields.put_string(source);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  cl_program program = new_program(context, id, errcode_ret);
  program->source = std::move(source);
  return program;
}

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBinary(
    cl_context context, cl_uint num_devices, const cl_device_id* device_list, const size_t* lengths,
    const unsigned char** binaries, cl_int* binary_status, cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (num_devices == 0 || !valid_device_list(context->server, num_devices, device_list)) {
    return fail(errcode_ret, CL_INVALID_VALUE);
  }
  if (lengths == nullptr || binaries == nullptr) return fail(errcode_ret, CL_INVALID_VALUE);
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_program_with_binary);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  creating.objects(device_list, num_devices);
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (lengths[i] == 0 || binaries[i] == nullptr) {
      if (binary_status != nullptr) binary_status[i] = CL_INVALID_VALUE;
      return fail(errcode_ret, CL_INVALID_VALUE);
    }
    creating.fields.put_bytes(binaries[i], lengths[i]);
  }
  reply answer;
  cl_int status = creating.call(*context->server, answer);
  if (binary_status != nullptr && answer.fields_at < answer.payload.size()) {
    auto statuses = answer.fields().get_array<std::int32_t>();
    for (cl_uint i = 0; i < num_devices && i < statuses.size(); ++i) binary_status[i] = statuses[i];
  }
  if (status != CL_SUCCESS) return fail(errcode_ret, status);
  return new_program(context, id, errcode_ret);
}

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBuiltInKernels(
    cl_context context, cl_uint num_devices, const cl_device_id* device_list,
    const char* kernel_names, cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (num_devices == 0 || !valid_device_list(context->server, num_devices, device_list) ||
      kernel_names == nullptr) {
    return fail(errcode_ret, CL_INVALID_VALUE);
  }
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_program_with_builtin_kernels);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  creating.objects(device_list, num_devices);
  creating.fields.put_string(kernel_names);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  return new_program(context, id, errcode_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainProgram(cl_program program) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  ++program->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseProgram(cl_program program) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  release_object(program);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program program, cl_uint num_devices,
                                               const cl_device_id* device_list, const char* options,
                                               build_callback pfn_notify, void* user_data) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  if (!valid_device_list(program->server, num_devices, device_list)) return CL_INVALID_VALUE;
  if (pfn_notify == nullptr && user_data != nullptr) return CL_INVALID_VALUE;
  request building(opcode::build_program);
  building.object(program);
  building.objects(device_list, num_devices);
  put_options_and_includes(building, options, {program->source});
  reply answer;
  cl_int status = building.call(*program->server, answer);
  if (pfn_notify != nullptr) pfn_notify(program, user_data);
  return status;
}

CL_API_ENTRY cl_int CL_API_CALL clCompileProgram(cl_program program, cl_uint num_devices,
                                                 const cl_device_id* device_list,
                                                 const char* options, cl_uint num_input_headers,
                                                 const cl_program* input_headers,
                                                 const char** header_include_names,
                                                 build_callback pfn_notify, void* user_data) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  if (!valid_device_list(program->server, num_devices, device_list)) return CL_INVALID_VALUE;
  if ((num_input_headers == 0) != (input_headers == nullptr) ||
      (num_input_headers != 0 && header_include_names == nullptr)) {
    return CL_INVALID_VALUE;
  }
  for (cl_uint i = 0; i < num_input_headers; ++i) {
    if (!valid(input_headers[i], object_kind::program) ||
        input_headers[i]->server != program->server || header_include_names[i] == nullptr) {
      return CL_INVALID_VALUE;
    }
  }
  request compiling(opcode::compile_program);
  compiling.object(program);
  compiling.objects(device_list, num_devices);
  std::vector<std::string_view> sources{program->source};
  for (cl_uint i = 0; i < num_input_headers; ++i) sources.emplace_back(input_headers[i]->source);
  put_options_and_includes(compiling, options, sources);
  compiling.objects(input_headers, num_input_headers);
  for (cl_uint i = 0; i < num_input_headers; ++i)
    compiling.fields.put_string(header_include_names[i]);
  reply answer;
  cl_int status = compiling.call(*program->server, answer);
  if (pfn_notify != nullptr) pfn_notify(program, user_data);
  return status;
}

CL_API_ENTRY cl_program CL_API_CALL clLinkProgram(cl_context context, cl_uint num_devices,
                                                  const cl_device_id* device_list,
                                                  const char* options, cl_uint num_input_programs,
                                                  const cl_program* input_programs,
                                                  build_callback pfn_notify, void* user_data,
                                                  cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  if (!valid_device_list(context->server, num_devices, device_list) || num_input_programs == 0 ||
      input_programs == nullptr) {
    return fail(errcode_ret, CL_INVALID_VALUE);
  }
  for (cl_uint i = 0; i < num_input_programs; ++i) {
    if (!valid(input_programs[i], object_kind::program) ||
        input_programs[i]->server != context->server) {
      return fail(errcode_ret, CL_INVALID_PROGRAM);
    }
  }
  std::uint64_t id = context->server->new_id();
  request linking(opcode::link_program);
  linking.fields.put<std::uint64_t>(id);
  linking.object(context);
  linking.objects(device_list, num_devices);
  linking.fields.put_string(options != nullptr ? options : "");
  linking.objects(input_programs, num_input_programs);
  reply answer;
  cl_int status = linking.call(*context->server, answer);
  bool made = false;
  if (answer.fields_at < answer.payload.size()) made = answer.fields().get<std::uint8_t>() != 0;
  cl_program program = made ? new_program(context, id, nullptr) : nullptr;
  if (pfn_notify != nullptr && program != nullptr) pfn_notify(program, user_data);
  if (errcode_ret != nullptr) *errcode_ret = status;
  return program;
}

CL_API_ENTRY cl_int CL_API_CALL clUnloadPlatformCompiler(cl_platform_id platform) {
  if (!valid(platform, object_kind::platform)) return CL_INVALID_PLATFORM;
  request unloading(opcode::unload_platform_compiler);
  unloading.object(platform);
  return unloading.send(*platform->server);
}

CL_API_ENTRY cl_int CL_API_CALL clUnloadCompiler() {
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramInfo(cl_program program, cl_program_info param_name,
                                                 size_t param_value_size, void* param_value,
                                                 size_t* param_value_size_ret) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  if (param_name == CL_PROGRAM_REFERENCE_COUNT) {
    auto count = static_cast<cl_uint>(program->references.load());
    return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
  }
  if (param_name == CL_PROGRAM_CONTEXT) {
    return copy_value_info(program->context, param_value_size, param_value, param_value_size_ret);
  }
  if (param_name != CL_PROGRAM_BINARIES) {
    return forward_info(info_query::program, program, param_name, 0, param_value_size, param_value,
                        param_value_size_ret);
  }
  // An array of pointers to the caller's buffers, filled with each device's binary.
  request asking(opcode::get_info);
  asking.fields.put<std::uint8_t>(static_cast<std::uint8_t>(info_query::program))
      .put<std::uint32_t>(CL_PROGRAM_BINARIES);
  asking.object(program);
  asking.fields.put<std::uint64_t>(0);
  reply answer;
  if (cl_int status = asking.call(*program->server, answer); status != CL_SUCCESS) return status;
  reader fields = answer.fields();
  if (fields.get<std::uint8_t>() != 2) return CL_OUT_OF_RESOURCES;
  auto count = fields.get<std::uint32_t>();
  std::size_t size = count * sizeof(unsigned char*);
  if (param_value_size_ret != nullptr) *param_value_size_ret = size;
  if (param_value == nullptr) return CL_SUCCESS;
  if (param_value_size < size) return CL_INVALID_VALUE;
  auto** targets = static_cast<unsigned char**>(param_value);
  for (std::uint32_t i = 0; i < count; ++i) {
    auto binary = fields.get_bytes();
    if (targets[i] != nullptr && !binary.empty())
      std::memcpy(targets[i], binary.data(), binary.size());
  }
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                                      cl_program_build_info param_name,
                                                      size_t param_value_size, void* param_value,
                                                      size_t* param_value_size_ret) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  if (!valid(device, object_kind::device) || device->server != program->server) {
    return CL_INVALID_DEVICE;
  }
  return forward_info(info_query::program_build, program, param_name, device->id, param_value_size,
                      param_value, param_value_size_ret);
}

CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char* kernel_name,
                                                  cl_int* errcode_ret) {
  if (!valid(program, object_kind::program)) return fail(errcode_ret, CL_INVALID_PROGRAM);
  if (kernel_name == nullptr) return fail(errcode_ret, CL_INVALID_VALUE);
  std::uint64_t id = program->server->new_id();
  request creating(opcode::create_kernel);
  creating.fields.put<std::uint64_t>(id);
  creating.object(program);
  creating.fields.put_string(kernel_name);
  reply answer;
  if (cl_int status = creating.call(*program->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* kernel = new _cl_kernel(object_kind::kernel, program->server, id);
  kernel->program = program;
  hold_parent(kernel, program);
  program->server->register_object(kernel);
  succeed(errcode_ret);
  return kernel;
}

CL_API_ENTRY cl_int CL_API_CALL clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                                         cl_kernel* kernels,
                                                         cl_uint* num_kernels_ret) {
  if (!valid(program, object_kind::program)) return CL_INVALID_PROGRAM;
  request creating(opcode::create_kernels_in_program);
  creating.object(program);
  creating.fields.put<std::uint8_t>(kernels == nullptr ? 1 : 0);
  reply answer;
  if (cl_int status = creating.call(*program->server, answer); status != CL_SUCCESS) return status;
  reader fields = answer.fields();
  auto count = fields.get<std::uint32_t>();
  auto ids = fields.get_array<std::uint64_t>();
  if (num_kernels_ret != nullptr) *num_kernels_ret = count;
  if (kernels == nullptr) return CL_SUCCESS;
  bool fits = num_kernels >= ids.size();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto* kernel =
        static_cast<_cl_kernel*>(program->server->object_for(object_kind::kernel, ids[i]));
    kernel->program = program;
    kernel->references = 1;
    hold_parent(kernel, program);
    if (fits) {
      kernels[i] = kernel;
    } else {
      release_object(kernel);
    }
  }
  return fits ? CL_SUCCESS : CL_INVALID_VALUE;
}

CL_API_ENTRY cl_int CL_API_CALL clRetainKernel(cl_kernel kernel) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  ++kernel->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  release_object(kernel);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                               const void* arg_value) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  request setting(opcode::set_kernel_arg);
  setting.object(kernel);
  setting.fields.put<std::uint32_t>(arg_index);
  // A cl_mem or cl_sampler argument is a pointer to one of our objects: send its id. Other
  // values of pointer size are told apart by not being a live object of this driver.
  void* candidate = nullptr;
  if (arg_size == sizeof(void*) && arg_value != nullptr) {
    std::memcpy(&candidate, arg_value, sizeof candidate);
  }
  if (candidate != nullptr && is_live_object(candidate)) {
    auto* object = static_cast<remote_object*>(candidate);
    if (object->server != kernel->server) return CL_INVALID_MEM_OBJECT;
    if (object->kind == object_kind::mem) {
      setting.fields.put<std::uint8_t>(static_cast<std::uint8_t>(argument_form::mem));
    } else if (object->kind == object_kind::sampler) {
      setting.fields.put<std::uint8_t>(static_cast<std::uint8_t>(argument_form::sampler));
    } else {
      return CL_INVALID_ARG_VALUE;
    }
    setting.object(object);
  } else {
    setting.fields.put<std::uint8_t>(static_cast<std::uint8_t>(argument_form::bytes));
    setting.fields.put<std::uint64_t>(arg_size).put<std::uint8_t>(arg_value != nullptr ? 1 : 0);
    setting.fields.put_bytes(arg_value, arg_value != nullptr ? arg_size : 0);
  }
  // Pipelined: a bad argument shows at the launch (CL_INVALID_KERNEL_ARGS) or the next sync.
  return setting.send(*kernel->server);
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name,
                                                size_t param_value_size, void* param_value,
                                                size_t* param_value_size_ret) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  switch (param_name) {
    case CL_KERNEL_REFERENCE_COUNT: {
      auto count = static_cast<cl_uint>(kernel->references.load());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    case CL_KERNEL_PROGRAM:
      return copy_value_info(kernel->program, param_value_size, param_value, param_value_size_ret);
    case CL_KERNEL_CONTEXT:
      return copy_value_info(kernel->program->context, param_value_size, param_value,
                             param_value_size_ret);
    default:
      return forward_info(info_query::kernel, kernel, param_name, 0, param_value_size, param_value,
                          param_value_size_ret);
  }
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_indx,
                                                   cl_kernel_arg_info param_name,
                                                   size_t param_value_size, void* param_value,
                                                   size_t* param_value_size_ret) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  return forward_info(info_query::kernel_arg, kernel, param_name, arg_indx, param_value_size,
                      param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                                         cl_kernel_work_group_info param_name,
                                                         size_t param_value_size, void* param_value,
                                                         size_t* param_value_size_ret) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  if (device != nullptr &&
      (!valid(device, object_kind::device) || device->server != kernel->server)) {
    return CL_INVALID_DEVICE;
  }
  return forward_info(info_query::kernel_work_group, kernel, param_name,
                      device != nullptr ? device->id : 0, param_value_size, param_value,
                      param_value_size_ret);
}

}  // extern "C"
