#include "device/cuda/cuda_program.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

constexpr std::size_t jit_log_bytes = 16 << 10;

/// The names of the module's kernels, or nothing when the driver cannot list them (before
/// CUDA 12.4).
std::optional<std::vector<std::string>> kernel_names(const cuda_driver& driver, CUmodule module) {
  if (!driver.cuModuleGetFunctionCount || !driver.cuModuleEnumerateFunctions ||
      !driver.cuFuncGetName) {
    return std::nullopt;
  }
  unsigned count = 0;
  if (driver.cuModuleGetFunctionCount(&count, module) != CUDA_SUCCESS) return std::nullopt;
  std::vector<CUfunction> functions(count);
  if (count > 0 &&
      driver.cuModuleEnumerateFunctions(functions.data(), count, module) != CUDA_SUCCESS) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (CUfunction function : functions) {
    const char* name = nullptr;
    if (driver.cuFuncGetName(&name, function) != CUDA_SUCCESS || !name) return std::nullopt;
    names.emplace_back(name);
  }
  return names;
}

std::string missing_kernel_message(const cuda_driver& driver, CUmodule module,
                                   const std::string& name) {
  std::string message = "program has no kernel '" + name + "'";
  const std::optional<std::vector<std::string>> names = kernel_names(driver, module);
  bool mangled = !names;
  if (names && names->empty()) message += "; it has no kernels";
  if (names && !names->empty()) {
    message += "; it has: ";
    for (std::size_t index = 0; index < names->size(); ++index) {
      if (index > 0) message += ", ";
      message += (*names)[index];
      mangled = mangled || (*names)[index].starts_with("_Z");
    }
  }
  if (mangled) message += ". CUDA kernels need extern \"C\" so their names are not mangled";
  return message;
}

/// The sizes of the kernel's parameters, where the driver can tell (CUDA 12.4 and newer).
void describe_parameters(const cuda_driver& driver, cuda_kernel& kernel) {
  kernel.params_known = driver.cuFuncGetParamInfo != nullptr;
  for (std::size_t index = 0; kernel.params_known; ++index) {
    std::size_t offset = 0;
    std::size_t size = 0;
    const CUresult result = driver.cuFuncGetParamInfo(kernel.function(), index, &offset, &size);
    if (result == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    if (result != CUDA_SUCCESS) {
      // The launch still works; the frontend just cannot check the arguments.
      kernel.params.clear();
      kernel.params_known = false;
      break;
    }
    kernel.params.push_back({kernel_param::kind::unknown, size, {}});
  }
}

}  // namespace

cuda_module::cuda_module(std::shared_ptr<cuda_context> owner, const cuda_image& image)
    : context(std::move(owner)) {
  context->make_current();
  std::string log(jit_log_bytes, '\0');
  std::array<CUjit_option, 2> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  std::array<void*, 2> values{log.data(),
                              reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size()))};
  const CUresult result = context->driver().cuModuleLoadDataEx(
      &handle, image.bytes.data(), static_cast<unsigned>(options.size()), options.data(),
      values.data());
  if (result == CUDA_SUCCESS) return;
  handle = nullptr;
  log.resize(std::strlen(log.c_str()));
  std::string detail;
  if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
    detail = " (the PTX comes from an NVRTC newer than the driver: update the driver)";
  } else if (result == CUDA_ERROR_NO_BINARY_FOR_GPU) {
    detail = " (the program was compiled for another architecture than the device's)";
  }
  if (!log.empty()) detail += ":\n" + log;
  context->fail(result, "cuModuleLoadDataEx", detail);
}

cuda_module::~cuda_module() {
  context->make_current_quietly();
  context->driver().cuModuleUnload(handle);
}

cuda_kernel::cuda_kernel(std::shared_ptr<cuda_module> module, CUfunction function)
    : module_(std::move(module)), function_(function) {}

void cuda_kernel::allow_shared_bytes(std::size_t bytes) {
  if (bytes <= shared_allowed_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(shared_mutex_);
  if (bytes <= shared_allowed_.load(std::memory_order_relaxed)) return;
  // launch_geometry checked `bytes` against the device's limit, so it fits an int.
  const CUresult result = context().driver().cuFuncSetAttribute(
      function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
  if (result != CUDA_SUCCESS) {
    context().fail(result, "cuFuncSetAttribute",
                   " (" + std::to_string(bytes) + " bytes of dynamic shared memory for kernel '" +
                       name + "')");
  }
  shared_allowed_.store(bytes, std::memory_order_release);
}

cuda_program::cuda_program(std::shared_ptr<cuda_context> context, cuda_image image, std::string log)
    : image_(std::move(image)),
      log_(std::move(log)),
      module_(std::make_shared<cuda_module>(std::move(context), image_)) {}

std::vector<std::byte> cuda_program::binary() const {
  return encode_image(image_);
}

std::unique_ptr<backend_kernel> cuda_program::kernel(const std::string& name) {
  const cuda_context& context = *module_->context;
  const cuda_driver& driver = context.driver();
  context.make_current();
  CUfunction function = nullptr;
  const CUresult result = driver.cuModuleGetFunction(&function, module_->handle, name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND) {
    throw error(errc::invalid_argument, missing_kernel_message(driver, module_->handle, name));
  }
  context.check(result, "cuModuleGetFunction");
  auto kernel = std::make_unique<cuda_kernel>(module_, function);
  kernel->name = name;
  describe_parameters(driver, *kernel);
  return kernel;
}

}  // namespace troupe::detail
