#include "device/cuda/cuda_driver.hpp"

#include <dlfcn.h>

#include <initializer_list>
#include <vector>

namespace troupe::detail {
namespace {

/// A shared library opened with dlopen, or the loader's reasons it could not be.
struct library {
  void* handle = nullptr;
  std::string error;
};

library open_first_of(std::initializer_list<const char*> names) {
  library opened;
  for (const char* name : names) {
    opened.handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (opened.handle) {
      opened.error.clear();
      return opened;
    }
    const char* reason = ::dlerror();
    if (!opened.error.empty()) opened.error += "; ";
    opened.error += reason ? reason : name;
  }
  return opened;
}

// Each library is opened once per process and never closed: unloading a driver whose threads may
// still run would crash. These function-local statics are the backend's only process-wide state,
// and they never change after their thread-safe initialisation.
const library& cuda_library() {
  static const library opened = open_first_of({"libcuda.so.1"});
  return opened;
}

const library& nvrtc_shared_library() {
  static const library opened = open_first_of({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
  return opened;
}

template <class Pointer>
bool resolve(void* handle, const char* symbol, Pointer& pointer) {
  pointer = reinterpret_cast<Pointer>(::dlsym(handle, symbol));
  return pointer != nullptr;
}

std::string join(const std::vector<const char*>& names) {
  std::string joined;
  for (const char* name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

}  // namespace

// The argument of TROUPE_RESOLVE_* is macro-expanded before it reaches TROUPE_STRINGIZE, so the
// string is the versioned symbol ("cuMemAlloc_v2"), matching the member's declared type.
#define TROUPE_STRINGIZE(name) #name
#define TROUPE_RESOLVE_REQUIRED(name)                       \
  if (!resolve(handle, TROUPE_STRINGIZE(name), table.name)) \
    missing.push_back(TROUPE_STRINGIZE(name));
#define TROUPE_RESOLVE_OPTIONAL(name) resolve(handle, TROUPE_STRINGIZE(name), table.name);

loaded<cuda_driver> load_cuda_driver() {
  loaded<cuda_driver> result;
  const library& opened = cuda_library();
  if (!opened.handle) {
    result.error = "CUDA driver library libcuda.so.1 not found (" + opened.error + ")";
    return result;
  }
  void* handle = opened.handle;
  cuda_driver& table = result.functions;
  std::vector<const char*> missing;
  TROUPE_CUDA_REQUIRED_FUNCTIONS(TROUPE_RESOLVE_REQUIRED)
  TROUPE_CUDA_OPTIONAL_FUNCTIONS(TROUPE_RESOLVE_OPTIONAL)
  if (!missing.empty()) {
    result.error = "CUDA driver library libcuda.so.1 lacks " + join(missing) +
                   ": the driver is older than troupe needs";
  }
  return result;
}

loaded<nvrtc_library> load_nvrtc() {
  loaded<nvrtc_library> result;
  const library& opened = nvrtc_shared_library();
  if (!opened.handle) {
    result.error =
        "NVRTC not found (tried libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so: " + opened.error + ")";
    return result;
  }
  void* handle = opened.handle;
  nvrtc_library& table = result.functions;
  std::vector<const char*> missing;
  TROUPE_NVRTC_REQUIRED_FUNCTIONS(TROUPE_RESOLVE_REQUIRED)
  TROUPE_NVRTC_OPTIONAL_FUNCTIONS(TROUPE_RESOLVE_OPTIONAL)
  if (!missing.empty()) result.error = "NVRTC lacks " + join(missing) + ": it is too old";
  return result;
}

#undef TROUPE_RESOLVE_OPTIONAL
#undef TROUPE_RESOLVE_REQUIRED
#undef TROUPE_STRINGIZE

}  // namespace troupe::detail
