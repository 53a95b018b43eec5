#include "device/native_cuda.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <stdexcept>

namespace troupe::bench::cuda {
namespace {

// The first library of `names` that opens, or null with the loader's reasons in `why`.
void* open_first(std::initializer_list<const char*> names, std::string& why) {
  for (const char* name : names) {
    if (void* handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* reason = ::dlerror();
    why += why.empty() ? "" : "; ";
    why += reason ? reason : name;
  }
  return nullptr;
}

template <class Pointer>
void resolve(void* library, const char* symbol, Pointer& pointer, std::string& missing) {
  pointer = reinterpret_cast<Pointer>(::dlsym(library, symbol));
  if (!pointer) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
}

// Expanded before stringizing, so the symbol is the versioned one ("cuMemAlloc_v2").
#define TROUPE_BENCH_STRINGIZE(name) #name
#define TROUPE_BENCH_RESOLVE_CUDA(name) \
  resolve(driver, TROUPE_BENCH_STRINGIZE(name), table.name, missing);
#define TROUPE_BENCH_RESOLVE_NVRTC(name) \
  resolve(nvrtc, TROUPE_BENCH_STRINGIZE(name), table.name, missing);

struct loaded {
  api table;
  std::string why;  // empty when usable
};

loaded load_once() {
  loaded result;
  api& table = result.table;
  std::string why;
  // Libraries stay open for the process: the driver's threads may outlive any unload point.
  void* driver = open_first({"libcuda.so.1"}, why);
  if (!driver) {
    result.why = "the CUDA driver is not installed (dlopen libcuda.so.1: " + why + ")";
    return result;
  }
  why.clear();
  void* nvrtc = open_first({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, why);
  if (!nvrtc) {
    result.why = "NVRTC is not installed (dlopen libnvrtc.so.13, .12, .so: " + why + ")";
    return result;
  }
  std::string missing;
  TROUPE_BENCH_CUDA_FUNCTIONS(TROUPE_BENCH_RESOLVE_CUDA)
  TROUPE_BENCH_NVRTC_FUNCTIONS(TROUPE_BENCH_RESOLVE_NVRTC)
  if (!missing.empty()) {
    result.why = "the CUDA driver or NVRTC is older than cuda.h (missing " + missing + ")";
    return result;
  }
  if (CUresult status = table.cuInit(0); status != CUDA_SUCCESS) {
    const char* name = nullptr;
    table.cuGetErrorName(status, &name);
    result.why = std::string("cuInit failed: ") + (name ? name : "unknown error");
  }
  return result;
}

#undef TROUPE_BENCH_RESOLVE_NVRTC
#undef TROUPE_BENCH_RESOLVE_CUDA
#undef TROUPE_BENCH_STRINGIZE

const loaded& loaded_once() {
  static const loaded result = load_once();
  return result;
}

std::string compile_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (functions().nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  functions().nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);  // without the terminating NUL
  return log;
}

// The --gpu-architecture option for a device of compute capability `capability` (90 for 9.0):
// a cubin for it when NVRTC knows it, else PTX of the newest architecture NVRTC knows below it,
// which the driver compiles for the device.
std::string architecture_option(int capability) {
  int count = 0;
  functions().nvrtcGetNumSupportedArchs(&count);
  std::vector<int> supported(static_cast<std::size_t>(std::max(count, 0)));
  if (!supported.empty()) functions().nvrtcGetSupportedArchs(supported.data());
  if (supported.empty() || std::ranges::find(supported, capability) != supported.end())
    return "--gpu-architecture=sm_" + std::to_string(capability);
  int below = 0;
  for (int architecture : supported)
    if (architecture < capability) below = std::max(below, architecture);
  if (below == 0)
    throw std::runtime_error("NVRTC cannot compile for sm_" + std::to_string(capability));
  return "--gpu-architecture=compute_" + std::to_string(below);
}

}  // namespace

const api* load(std::string& why) {
  const loaded& result = loaded_once();
  why = result.why;
  return result.why.empty() ? &result.table : nullptr;
}

const api& functions() {
  return loaded_once().table;
}

void check(CUresult result, std::string_view call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  functions().cuGetErrorName(result, &name);
  throw std::runtime_error(std::string(call) + " failed: " + (name ? name : "unknown error"));
}

device::device(int ordinal) {
  check(functions().cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  std::array<char, 256> text{};
  check(functions().cuDeviceGetName(text.data(), static_cast<int>(text.size()), device_),
        "cuDeviceGetName");
  name_ = text.data();
  check(functions().cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
}

device::~device() {
  functions().cuDevicePrimaryCtxRelease(device_);
}

void device::make_current() const {
  check(functions().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

stream::stream(const device& on) {
  on.make_current();
  check(functions().cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
}

stream::~stream() {
  functions().cuStreamDestroy(stream_);
}

device_memory::device_memory(const device& on, std::size_t bytes) {
  on.make_current();
  check(functions().cuMemAlloc(&address_, bytes), "cuMemAlloc");
}

device_memory::~device_memory() {
  functions().cuMemFree(address_);
}

module::module(const device& target, const std::string& source,
               const std::vector<std::string>& options) :owner_(target) {
  target.make_current();
  int major = 0;
  int minor = 0;
  check(functions().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                         target.handle()),
        "cuDeviceGetAttribute");
  check(functions().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                         target.handle()),
        "cuDeviceGetAttribute");
  std::vector<std::string> all = options;
  all.push_back(architecture_option(major * 10 + minor));
  std::vector<const char*> pointers;
  for (const std::string& option : all) pointers.push_back(option.c_str());

  nvrtcProgram program = nullptr;
  if (functions().nvrtcCreateProgram(&program, source.c_str(), "bench.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    throw std::runtime_error("nvrtcCreateProgram failed");
  // The program is destroyed on every way out, the throwing ones too.
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owner(
      &program, [](nvrtcProgram* owned) { functions().nvrtcDestroyProgram(owned); });
  nvrtcResult compiled =
      functions().nvrtcCompileProgram(program, static_cast<int>(pointers.size()), pointers.data());
  if (compiled != NVRTC_SUCCESS)
    throw std::runtime_error(std::string("nvrtcCompileProgram: ") +
                             functions().nvrtcGetErrorString(compiled) + "\n" +
                             compile_log(program));

  // A cubin for a real architecture, PTX (NUL-terminated, as the driver wants) for a virtual one.
  std::size_t size = 0;
  std::vector<char> image;
  if (functions().nvrtcGetCUBINSize(program, &size) == NVRTC_SUCCESS && size > 0) {
    image.resize(size);
    functions().nvrtcGetCUBIN(program, image.data());
  } else {
    functions().nvrtcGetPTXSize(program, &size);
    image.resize(size);
    functions().nvrtcGetPTX(program, image.data());
  }
  check(functions().cuModuleLoadData(&module_, image.data()), "cuModuleLoadData");
}

module::~module() {
  functions().cuCtxSetCurrent(owner_.context());
  functions().cuModuleUnload(module_);
}

CUfunction module::function(const char* name) const {
  CUfunction kernel = nullptr;
  check(functions().cuModuleGetFunction(&kernel, module_, name), "cuModuleGetFunction");
  return kernel;
}

}  // namespace troupe::bench::cuda
