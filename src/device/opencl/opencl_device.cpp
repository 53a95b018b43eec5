#include "device/opencl/opencl_device.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "device/opencl/opencl_host_memory.hpp"
#include "device/opencl/opencl_program.hpp"
#include "device/opencl/opencl_program_image.hpp"
#include "device/opencl/opencl_queue.hpp"

namespace troupe::detail {
namespace {

std::string device_string(cl_device_id id, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  clGetDeviceInfo(id, what, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  return value;
}

template <class T>
T device_value(cl_device_id id, cl_device_info what) {
  T value{};
  clGetDeviceInfo(id, what, sizeof value, &value, nullptr);
  return value;
}

std::string platform_string(cl_platform_id id, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  clGetPlatformInfo(id, what, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  return value;
}

/// "OpenCL 3.0 PoCL ..." → 3.0
version parse_version(const std::string& text) {
  version v;
  std::sscanf(text.c_str(), "OpenCL %d.%d", &v.major, &v.minor);
  return v;
}

/// Bytes of a by-value parameter of this OpenCL C type (canonical_type); 0 when not a known
/// scalar or vector.
std::size_t scalar_size(const std::string& type) {
  static const std::pair<const char*, std::size_t> sizes[] = {
      {"char", 1}, {"uchar", 1},  {"short", 2}, {"ushort", 2}, {"int", 4},
      {"uint", 4}, {"long", 8},   {"ulong", 8}, {"float", 4},  {"double", 8},
      {"half", 2}, {"size_t", 0}, {"bool", 0}};
  for (auto [name, size] : sizes) {
    auto n = std::strlen(name);
    if (type.compare(0, n, name) != 0) continue;
    auto rest = type.substr(n);
    if (rest.empty()) return size;
    int lanes = std::atoi(rest.c_str());
    if (lanes == 3) lanes = 4;  // vec3 types take the space of vec4
    if (lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16) return size * std::size_t(lanes);
    return 0;
  }
  return 0;
}

}  // namespace

opencl_device::opencl_device(cl_platform_id platform, cl_device_id id, bool stage_cpu_copies,
                             bool one_launching_thread, bool blocking_reads)
    : context_(std::make_shared<opencl_context>()),
      stage_cpu_copies_(stage_cpu_copies),
      one_launching_thread_(one_launching_thread),
      blocking_reads_(blocking_reads) {
  info.name = device_string(id, CL_DEVICE_NAME);
  info.vendor = device_string(id, CL_DEVICE_VENDOR);
  info.driver = device_string(id, CL_DRIVER_VERSION);
  info.backend = backend::opencl;
  auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
  info.type = (type & CL_DEVICE_TYPE_GPU)           ? device_type::gpu
              : (type & CL_DEVICE_TYPE_CPU)         ? device_type::cpu
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? device_type::accelerator
                                                    : device_type::other;
  info.global_memory = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.max_work_group_size = device_value<std::size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  info.opencl_version = parse_version(device_string(id, CL_DEVICE_VERSION));
  identity_ = "opencl|" + platform_string(platform, CL_PLATFORM_NAME) + "|" + info.name + "|" +
              info.driver + "|" + device_string(id, CL_DEVICE_VERSION);
  context_->device = id;
  context_->name = info.name;
  cl_int status = CL_SUCCESS;
  context_->context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
  check_opencl(status, "clCreateContext", info.name);
  memory_ = std::make_shared<opencl_memory_cache>(
      context_, kept_memory_limit(info.global_memory),
      static_cast<std::size_t>(device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE)));
}

std::unique_ptr<backend_memory> opencl_device::allocate(std::size_t bytes) {
  return std::make_unique<opencl_memory>(memory_, bytes);
}

std::unique_ptr<backend_host_memory> opencl_device::allocate_host(std::size_t bytes) {
  cl_int status = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context_->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                            nullptr, &status);
  check_opencl(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", info.name);
  cl_command_queue q = clCreateCommandQueue(context_->context, context_->device, 0, &status);
  if (status != CL_SUCCESS) clReleaseMemObject(m);
  check_opencl(status, "clCreateCommandQueue", info.name);
  // Mapping once is how OpenCL hands out page-locked host memory; it is a host-side call.
  void* data = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                  nullptr, &status);
  if (status != CL_SUCCESS) {
    clReleaseCommandQueue(q);
    clReleaseMemObject(m);
  }
  check_opencl(status, "clEnqueueMapBuffer", info.name);
  auto memory = std::make_unique<opencl_host_memory>(m, q, context_);
  memory->data = data;
  memory->bytes = bytes;
  return memory;
}

std::unique_ptr<backend_queue> opencl_device::make_queue() {
  cl_int status = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(context_->context, context_->device, 0, &status);
  check_opencl(status, "clCreateCommandQueue", info.name);
  return std::make_unique<opencl_queue>(q, context_, memory_, staging(), one_launching_thread_,
                                        blocking_reads_);
}

std::unique_ptr<backend_program> opencl_device::build(const std::string& source,
                                                      const std::string& options) {
  const char* text = source.c_str();
  std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(context_->context, 1, &text, &length, &status);
  check_opencl(status, "clCreateProgramWithSource", info.name);
  // Argument info lets launches check argument types; it costs nothing at run time. NVIDIA's
  // compiler (driver 580) rejects it for kernels without parameters, so a failed build is
  // retried without it: then launches check the argument count only.
  auto with_info = options + " -cl-kernel-arg-info";
  status = clBuildProgram(p, 1, &context_->device, with_info.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS)
    status = clBuildProgram(p, 1, &context_->device, options.c_str(), nullptr, nullptr);
  auto log = build_log(p);
  if (status != CL_SUCCESS) {
    clReleaseProgram(p);
    if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS ||
        status == CL_COMPILE_PROGRAM_FAILURE)
      throw error(errc::compile_error, "OpenCL program for device '" + info.name +
                                           "' did not compile (" + opencl_error_name(status) +
                                           "), options '" + options + "':\n" + log);
    check_opencl(status, "clBuildProgram", info.name);
  }
  opencl_program_image image;
  try {
    image.kernels = kernel_params(p);
  } catch (...) {
    clReleaseProgram(p);
    throw;
  }
  return std::make_unique<opencl_program>(p, context_, std::move(log), std::move(image));
}

std::unique_ptr<backend_program> opencl_device::load(std::span<const std::byte> blob) {
  auto image = opencl_program_image::parse(blob, info.name);
  const unsigned char* data = image.binary.data();
  std::size_t size = image.binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(context_->context, 1, &context_->device, &size, &data,
                                           &binary_status, &status);
  check_opencl(status, "clCreateProgramWithBinary", info.name);
  status = clBuildProgram(p, 1, &context_->device, "", nullptr, nullptr);
  if (status != CL_SUCCESS) clReleaseProgram(p);
  check_opencl(status, "clBuildProgram (from the cached binary)", info.name);
  return std::make_unique<opencl_program>(p, context_, std::string{}, std::move(image));
}

std::string opencl_device::build_log(cl_program p) const {
  std::size_t size = 0;
  clGetProgramBuildInfo(p, context_->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size != 0)
    clGetProgramBuildInfo(p, context_->device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  log.resize(std::strlen(log.c_str()));
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

std::map<std::string, std::vector<kernel_param>> opencl_device::kernel_params(cl_program p) const {
  cl_uint count = 0;
  check_opencl(clCreateKernelsInProgram(p, 0, nullptr, &count), "clCreateKernelsInProgram",
               info.name);
  std::vector<cl_kernel> kernels(count);
  if (count != 0)
    check_opencl(clCreateKernelsInProgram(p, count, kernels.data(), nullptr),
                 "clCreateKernelsInProgram", info.name);
  std::map<std::string, std::vector<kernel_param>> out;
  for (auto k : kernels) {
    std::size_t size = 0;
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size);
    std::string name(size, '\0');
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr);
    name.resize(std::strlen(name.c_str()));
    cl_uint args = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
    auto& params = out[name];
    for (cl_uint i = 0; i < args; ++i) {
      kernel_param param;
      cl_kernel_arg_address_qualifier address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
      if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address,
                             nullptr) == CL_SUCCESS) {
        std::size_t type_size = 0;
        clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, 0, nullptr, &type_size);
        std::string type(type_size, '\0');
        clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, type_size, type.data(), nullptr);
        type.resize(std::strlen(type.c_str()));
        param.type_name = canonical_type(type);
        param.what = address == CL_KERNEL_ARG_ADDRESS_GLOBAL ? kernel_param::kind::global_pointer
                     : address == CL_KERNEL_ARG_ADDRESS_CONSTANT
                         ? kernel_param::kind::constant_pointer
                     : address == CL_KERNEL_ARG_ADDRESS_LOCAL ? kernel_param::kind::local_pointer
                                                              : kernel_param::kind::scalar;
        if (param.what == kernel_param::kind::scalar) param.size = scalar_size(param.type_name);
      }
      params.push_back(param);
    }
    clReleaseKernel(k);
  }
  return out;
}

std::shared_ptr<opencl_staging> opencl_device::staging() {
  if (info.type == device_type::cpu && !stage_cpu_copies_) return nullptr;
  std::lock_guard lock(staging_mutex_);
  if (!staging_) staging_ = std::make_shared<opencl_staging>(context_);
  return staging_;
}

}  // namespace troupe::detail
