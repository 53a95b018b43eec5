// Programs and kernels: creating, building, compiling and linking programs, creating kernels and
// setting their arguments.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "remote/server/build_refusals.hpp"
#include "remote/server/handlers.hpp"
#include "remote/server/include_folders.hpp"

namespace troupe::remote::server {

namespace {

// PoCL 3.1 asserts, aborting the whole server, when an input of clLinkProgram holds no compiled
// binary for a device of the link (its clCompileProgram failed, say), or lists its devices in
// another order. OpenCL wants compiled objects or libraries there: refuse anything else first.
void check_link_inputs(cl_context context, std::vector<cl_device_id> devices,
                       const std::vector<cl_program>& inputs) {
  if (devices.empty()) {
    std::size_t size = 0;
    check(clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size), "clGetContextInfo");
    devices.resize(size / sizeof(cl_device_id));
    check(clGetContextInfo(context, CL_CONTEXT_DEVICES, size, devices.data(), nullptr),
          "clGetContextInfo");
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::size_t size = 0;
    check(clGetProgramInfo(inputs[i], CL_PROGRAM_DEVICES, 0, nullptr, &size), "clGetProgramInfo");
    std::vector<cl_device_id> theirs(size / sizeof(cl_device_id));
    check(clGetProgramInfo(inputs[i], CL_PROGRAM_DEVICES, size, theirs.data(), nullptr),
          "clGetProgramInfo");
    if (theirs.size() < devices.size() ||
        !std::equal(devices.begin(), devices.end(), theirs.begin())) {
      throw cl_failure{CL_INVALID_OPERATION, "input program " + std::to_string(i) +
                                                 " is not for the link's devices, in order"};
    }
    // PoCL keeps the binary type of a failed compile: the binary's size tells.
    std::vector<std::size_t> sizes(theirs.size());
    check(clGetProgramInfo(inputs[i], CL_PROGRAM_BINARY_SIZES, sizes.size() * sizeof(std::size_t),
                           sizes.data(), nullptr),
          "clGetProgramInfo");
    for (std::size_t d = 0; d < devices.size(); ++d) {
      cl_program_binary_type type = CL_PROGRAM_BINARY_TYPE_NONE;
      check(clGetProgramBuildInfo(inputs[i], devices[d], CL_PROGRAM_BINARY_TYPE, sizeof type, &type,
                                  nullptr),
            "clGetProgramBuildInfo");
      if (sizes[d] == 0 || (type != CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT &&
                            type != CL_PROGRAM_BINARY_TYPE_LIBRARY)) {
        throw cl_failure{CL_INVALID_OPERATION, "input program " + std::to_string(i) +
                                                   " is no compiled object or library"};
      }
    }
  }
}

// Kernel arguments. OpenCL takes a buffer, image or sampler argument as a pointer to a handle,
// and PoCL dereferences any non-null one (and, at launch, a null image or sampler): bytes from
// the client must never reach OpenCL as a handle, and a handle only where one of its kind goes.
// The server builds every program with argument information to tell the kinds apart.
constexpr const char* argument_info_option = " -cl-kernel-arg-info";

enum class argument_kind { unknown, value, local, buffer, image, sampler };

argument_kind find_kind_of_argument(cl_kernel kernel, cl_uint index) {
  cl_kernel_arg_address_qualifier address = 0;
  std::size_t length = 0;
  if (clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address,
                         nullptr) != CL_SUCCESS ||
      clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, 0, nullptr, &length) !=
          CL_SUCCESS) {
    return argument_kind::unknown;  // no argument information: a program from a binary
  }
  std::string type(length, '\0');
  if (clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, length, type.data(), nullptr) !=
      CL_SUCCESS) {
    return argument_kind::unknown;
  }
  type.resize(std::strlen(type.c_str()));
  switch (address) {
    case CL_KERNEL_ARG_ADDRESS_LOCAL:
      return argument_kind::local;
    case CL_KERNEL_ARG_ADDRESS_GLOBAL:
    case CL_KERNEL_ARG_ADDRESS_CONSTANT:
      return type.starts_with("image") ? argument_kind::image : argument_kind::buffer;
    default:
      return type == "sampler_t" ? argument_kind::sampler : argument_kind::value;
  }
}

// find_kind_of_argument, asked once per kernel and argument.
argument_kind kind_of_argument(cl_object& kernel, cl_uint index) {
  std::lock_guard lock(kernel.cache_mutex);
  if (index >= kernel.argument_kinds.size()) {
    if (index >= 4096) return find_kind_of_argument(kernel.as<cl_kernel>(), index);
    kernel.argument_kinds.resize(index + 1, -1);
  }
  int& known = kernel.argument_kinds[index];
  if (known < 0) known = static_cast<int>(find_kind_of_argument(kernel.as<cl_kernel>(), index));
  return static_cast<argument_kind>(known);
}

// Without argument information: OpenCL accepts a null value of a handle's size only for buffer
// and local arguments. (Sets the argument to null when it does; the caller sets it again.)
bool takes_buffer_or_local(cl_kernel kernel, cl_uint index) {
  return clSetKernelArg(kernel, index, sizeof(cl_mem), nullptr) == CL_SUCCESS;
}

void refuse_argument(cl_int code, cl_uint index, const char* why) {
  throw cl_failure{code, "argument " + std::to_string(index) + " " + why};
}

// A memory object for a buffer or image argument, of the matching type.
void check_mem_argument(cl_object& kernel, cl_uint index, cl_mem mem) {
  auto kind = kind_of_argument(kernel, index);
  if (kind == argument_kind::unknown || kind == argument_kind::local) return;  // OpenCL checks
  if (kind != argument_kind::buffer && kind != argument_kind::image) {
    refuse_argument(CL_INVALID_ARG_VALUE, index, "takes no memory object");
  }
  cl_mem_object_type type = 0;
  check(clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, nullptr), "clGetMemObjectInfo");
  if ((kind == argument_kind::image) != (type != CL_MEM_OBJECT_BUFFER)) {
    refuse_argument(CL_INVALID_MEM_OBJECT, index,
                    kind == argument_kind::image ? "takes an image" : "takes a buffer");
  }
}

void check_sampler_argument(cl_object& kernel, cl_uint index) {
  auto kind = kind_of_argument(kernel, index);
  if (kind == argument_kind::sampler) return;
  if (kind != argument_kind::unknown || takes_buffer_or_local(kernel.as<cl_kernel>(), index)) {
    refuse_argument(CL_INVALID_ARG_VALUE, index, "takes no sampler");
  }
}

// Bytes are a value: for a value or local argument, or a null buffer. Errors OpenCL reports
// without looking at the value (no value, a wrong size) are left to it.
void check_bytes_argument(call& c, cl_object& kernel, cl_uint index, bool has_value,
                          std::span<const std::byte> value) {
  if (!has_value || value.size() != sizeof(cl_mem)) return;
  bool null =
      std::all_of(value.begin(), value.end(), [](std::byte byte) { return byte == std::byte{0}; });
  switch (kind_of_argument(kernel, index)) {
    case argument_kind::value:
    case argument_kind::local:  // OpenCL refuses a value itself
      return;
    case argument_kind::buffer:
      if (!null) refuse_argument(CL_INVALID_MEM_OBJECT, index, "takes a buffer by id, not bytes");
      return;
    case argument_kind::image:  // a null one too: PoCL dereferences it at launch
      refuse_argument(CL_INVALID_MEM_OBJECT, index, "takes an image by id, not bytes");
      return;
    case argument_kind::sampler:
      refuse_argument(CL_INVALID_SAMPLER, index, "takes a sampler by id, not bytes");
      return;
    case argument_kind::unknown:
      // Without argument information a buffer or local argument is told apart (OpenCL takes a
      // null value for one). Any other could be an image or a sampler, which OpenCL reads the
      // bytes of as a handle (a forged pointer), and the server cannot tell it from a value of
      // the same size: refused.
      if (takes_buffer_or_local(kernel.as<cl_kernel>(), index)) {
        if (!null) refuse_argument(CL_INVALID_MEM_OBJECT, index, "takes a buffer by id, not bytes");
        return;
      }
      c.owner.refuse(
          CL_INVALID_ARG_VALUE,
          "argument " + std::to_string(index) +
              " got bytes of a handle's size, and its kernel has no argument information to tell "
              "a value from an image or sampler, whose bytes would be read as a handle: build "
              "the program from source");
  }
}

// A program's source; empty for one made from binaries or built-in kernels.
std::string program_source(cl_program program) {
  std::size_t size = 0;
  check(clGetProgramInfo(program, CL_PROGRAM_SOURCE, 0, nullptr, &size),
        "clGetProgramInfo(CL_PROGRAM_SOURCE)");
  std::string source(size, '\0');
  if (size > 0) {
    check(clGetProgramInfo(program, CL_PROGRAM_SOURCE, size, source.data(), nullptr),
          "clGetProgramInfo(CL_PROGRAM_SOURCE)");
  }
  source.resize(std::strlen(source.c_str()));
  return source;
}

// What a build or compile refuses to compile (build_refusals.hpp), and the codes it fails with.
struct build_inputs {
  const std::string& options;
  const sent_includes& includes;  // from the client's -I folders
  const std::vector<cl_program>& headers;
  const std::vector<std::string>& header_names;
  cl_int options_refused;  // CL_INVALID_BUILD_OPTIONS or CL_INVALID_COMPILER_OPTIONS
  cl_int source_refused;   // CL_BUILD_PROGRAM_FAILURE or CL_COMPILE_PROGRAM_FAILURE
};

// Refuses a build that could read the server's files: the program's build log says why until
// its next build (handlers_info.cpp reports it), and the server's log names the session.
void check_build_inputs(call& c, cl_object& program, const build_inputs& inputs) {
  auto refuse = [&](cl_int code, const std::string& why) {
    {
      std::lock_guard lock(program.cache_mutex);
      program.refused_build_log = "troupe-deviced refused this build: " + why + "\n";
    }
    c.owner.refuse(code, why);
  };
  {
    std::lock_guard lock(program.cache_mutex);
    program.refused_build_log.clear();
  }
  if (auto why = refused_build_option(inputs.options)) refuse(inputs.options_refused, *why);
  if (inputs.includes.over_limit) {
    refuse(inputs.options_refused,
           "the -I folders hold more than " + std::to_string(max_include_files) + " files or " +
               std::to_string(max_include_bytes >> 20) + " MiB that the sources include");
  }
  for (const auto& name : inputs.header_names) {
    if (auto why = refused_include_name(name)) refuse(CL_INVALID_VALUE, "input header " + *why);
  }
  if (auto why = refused_source_line(program_source(program.as<cl_program>()))) {
    refuse(inputs.source_refused, "the program's source, " + *why);
  }
  for (std::size_t i = 0; i < inputs.headers.size(); ++i) {
    if (auto why = refused_source_line(program_source(inputs.headers[i]))) {
      refuse(inputs.source_refused, "input header '" + inputs.header_names[i] + "', " + *why);
    }
  }
  for (std::size_t i = 0; i < inputs.includes.folders.size(); ++i) {
    for (const auto& [name, contents] : inputs.includes.folders[i]) {
      auto where = "-I folder " + std::to_string(i + 1) + "'s file ";
      if (auto why = refused_include_name(name)) refuse(inputs.options_refused, where + *why);
      if (auto why = refused_source_line(contents)) {
        refuse(inputs.source_refused, where + "'" + name + "', " + *why);
      }
    }
  }
}

// The -I folders on disk for one build; a file that cannot be written fails the build.
std::optional<include_folders> written(call& c, const sent_includes& includes) {
  try {
    return std::optional<include_folders>(std::in_place, includes);
  } catch (const std::exception& error) {
    c.owner.refuse(CL_OUT_OF_RESOURCES, error.what());
  }
}

}  // namespace

namespace handlers {

void create_program_with_source(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto source = c.in.get_string();
  const char* text = source.c_str();
  std::size_t length = source.size();
  cl_program program = clCreateProgramWithSource(context, 1, &text, &length, &status);
  check(status, "clCreateProgramWithSource");
  c.owner.add(id, object_kind::program, program);
}

void create_program_with_binary(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto listed = c.devices();
  std::vector<std::span<const std::byte>> binaries;
  std::vector<const unsigned char*> pointers;
  std::vector<std::size_t> lengths;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    binaries.push_back(c.in.get_bytes());
    pointers.push_back(reinterpret_cast<const unsigned char*>(binaries.back().data()));
    lengths.push_back(binaries.back().size());
  }
  std::vector<cl_int> binary_status(listed.size(), CL_SUCCESS);
  cl_program program =
      clCreateProgramWithBinary(context, static_cast<cl_uint>(listed.size()), listed.data(),
                                lengths.data(), pointers.data(), binary_status.data(), &status);
  c.out.put_array<std::int32_t>(binary_status);
  check(status, "clCreateProgramWithBinary");
  c.owner.add(id, object_kind::program, program);
}

void create_program_with_builtin_kernels(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto listed = c.devices();
  auto names = c.in.get_string();
  cl_program program = clCreateProgramWithBuiltInKernels(
      context, static_cast<cl_uint>(listed.size()), listed.data(), names.c_str(), &status);
  check(status, "clCreateProgramWithBuiltInKernels");
  c.owner.add(id, object_kind::program, program);
}

void build_program(call& c) {
  auto program = c.object<cl_program>(object_kind::program, CL_INVALID_PROGRAM);
  cl_object& program_object = *c.held.back();
  auto listed = c.devices();
  auto options = c.in.get_string();
  auto includes = sent_includes::read(c.in);
  check_build_inputs(
      c, program_object,
      {options, includes, {}, {}, CL_INVALID_BUILD_OPTIONS, CL_BUILD_PROGRAM_FAILURE});
  auto folders = written(c, includes);
  options += folders->options();
  auto build = [&](const std::string& with) {
    return clBuildProgram(program, static_cast<cl_uint>(listed.size()),
                          listed.empty() ? nullptr : listed.data(), with.c_str(), nullptr, nullptr);
  };
  // With argument information (see kind_of_argument); NVIDIA's compiler (driver 580) fails
  // a kernel without parameters with it, so a failed build is tried again as asked.
  cl_int built = build(options + argument_info_option);
  if (built != CL_SUCCESS) built = build(options);
  check(built, "clBuildProgram");
}

void compile_program(call& c) {
  auto program = c.object<cl_program>(object_kind::program, CL_INVALID_PROGRAM);
  cl_object& program_object = *c.held.back();
  auto listed = c.devices();
  auto options = c.in.get_string();
  auto includes = sent_includes::read(c.in);
  auto headers = c.objects<cl_program>(object_kind::program, CL_INVALID_PROGRAM);
  std::vector<std::string> names;
  std::vector<const char*> name_pointers;
  for (std::size_t i = 0; i < headers.size(); ++i) names.push_back(c.in.get_string());
  check_build_inputs(
      c, program_object,
      {options, includes, headers, names, CL_INVALID_COMPILER_OPTIONS, CL_COMPILE_PROGRAM_FAILURE});
  auto folders = written(c, includes);
  options += folders->options();
  for (auto& name : names) name_pointers.push_back(name.c_str());
  auto compile = [&](const std::string& with) {
    return clCompileProgram(
        program, static_cast<cl_uint>(listed.size()), listed.empty() ? nullptr : listed.data(),
        with.c_str(), static_cast<cl_uint>(headers.size()),
        headers.empty() ? nullptr : headers.data(),
        name_pointers.empty() ? nullptr : name_pointers.data(), nullptr, nullptr);
  };
  cl_int compiled = compile(options + argument_info_option);  // as in build_program
  if (compiled != CL_SUCCESS) compiled = compile(options);
  check(compiled, "clCompileProgram");
}

void link_program(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  auto listed = c.devices();
  auto options = c.in.get_string();
  auto inputs = c.objects<cl_program>(object_kind::program, CL_INVALID_PROGRAM);
  if (auto why = refused_build_option(options)) c.owner.refuse(CL_INVALID_LINKER_OPTIONS, *why);
  check_link_inputs(context, listed, inputs);
  auto link = [&](const std::string& with) {
    return clLinkProgram(context, static_cast<cl_uint>(listed.size()),
                         listed.empty() ? nullptr : listed.data(), with.c_str(),
                         static_cast<cl_uint>(inputs.size()), inputs.data(), nullptr, nullptr,
                         &status);
  };
  // PoCL keeps argument information through a link only when asked again; OpenCL does not
  // list the option for links, so an implementation that refuses it links without.
  cl_program program = link(options + argument_info_option);
  if (program == nullptr || status != CL_SUCCESS) {
    if (program != nullptr) clReleaseProgram(program);
    program = link(options);
  }
  // A failed link may still return a program, whose log says why: keep it for the client.
  if (program != nullptr) c.owner.add(id, object_kind::program, program);
  c.out.put<std::uint8_t>(program != nullptr ? 1 : 0);
  check(status, "clLinkProgram");
}

void unload_platform_compiler(call& c) {
  // A hint for the whole process, which every session's builds share: one session's hint must
  // not unload the compiler under another's. OpenCL lets the call do nothing.
  c.object<cl_platform_id>(object_kind::platform, CL_INVALID_PLATFORM);
}

void create_kernel(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto program = c.object<cl_program>(object_kind::program, CL_INVALID_PROGRAM);
  auto name = c.in.get_string();
  cl_kernel kernel = clCreateKernel(program, name.c_str(), &status);
  check(status, "clCreateKernel");
  c.owner.add(id, object_kind::kernel, kernel);
}

void create_kernels_in_program(call& c) {
  auto program = c.object<cl_program>(object_kind::program, CL_INVALID_PROGRAM);
  auto count_only = c.in.get<std::uint8_t>() != 0;
  cl_uint count = 0;
  check(clCreateKernelsInProgram(program, 0, nullptr, &count), "clCreateKernelsInProgram");
  std::vector<std::uint64_t> ids;
  if (!count_only && count > 0) {
    std::vector<cl_kernel> kernels(count);
    check(clCreateKernelsInProgram(program, count, kernels.data(), nullptr),
          "clCreateKernelsInProgram");
    ids = c.adopt_all(object_kind::kernel, kernels);
  }
  c.out.put<std::uint32_t>(count);
  c.out.put_array<std::uint64_t>(ids);
}

void set_kernel_arg(call& c) {
  auto kernel = c.object<cl_kernel>(object_kind::kernel, CL_INVALID_KERNEL);
  cl_object& kernel_object = *c.held.back();
  auto index = c.in.get<std::uint32_t>();
  auto form = static_cast<argument_form>(c.in.get<std::uint8_t>());
  if (form == argument_form::mem) {
    auto mem = c.object<cl_mem>(object_kind::mem, CL_INVALID_MEM_OBJECT);
    check_mem_argument(kernel_object, index, mem);
    check(clSetKernelArg(kernel, index, sizeof mem, &mem), "clSetKernelArg");
  } else if (form == argument_form::sampler) {
    auto sampler = c.object<cl_sampler>(object_kind::sampler, CL_INVALID_SAMPLER);
    check_sampler_argument(kernel_object, index);
    check(clSetKernelArg(kernel, index, sizeof sampler, &sampler), "clSetKernelArg");
  } else if (form == argument_form::bytes) {
    auto size = c.in.get<std::uint64_t>();
    auto has_value = c.in.get<std::uint8_t>() != 0;
    auto value = c.in.get_bytes();
    if (has_value && value.size() != size) {
      throw cl_failure{CL_INVALID_ARG_SIZE, "argument value of " + std::to_string(value.size()) +
                                                " bytes for a size of " + std::to_string(size)};
    }
    check_bytes_argument(c, kernel_object, index, has_value, value);
    // PoCL reads a pointer's worth of the value before it checks the size: pad the copy.
    std::vector<std::byte> padded(value.begin(), value.end());
    padded.resize(std::max(padded.size(), sizeof(cl_mem)));
    check(clSetKernelArg(kernel, index, size, has_value ? padded.data() : nullptr),
          "clSetKernelArg");
  } else {
    throw decode_error("set_kernel_arg with argument form " +
                       std::to_string(static_cast<int>(form)));
  }
}

}  // namespace handlers

}  // namespace troupe::remote::server
