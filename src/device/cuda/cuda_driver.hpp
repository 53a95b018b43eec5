#pragma once

// The CUDA driver API and NVRTC as tables of function pointers filled at run time with dlopen and
// dlsym. troupe never links libcuda, so a program starts, and reports that CUDA is unavailable, on
// a machine without an NVIDIA driver.

#include <cuda.h>
#include <nvrtc.h>

#include <string>

// The lists name functions as cuda.h spells them. A name handed to X is macro-expanded before X
// sees it, so cuda.h's versioning macros apply: `cuMemAlloc` declares the member `cuMemAlloc_v2`
// and resolves the symbol "cuMemAlloc_v2", the function a program compiled against this cuda.h
// would call; a call written `driver.cuMemAlloc(...)` expands the same way.
#define TROUPE_CUDA_REQUIRED_FUNCTIONS(X) \
  X(cuInit)                               \
  X(cuDriverGetVersion)                   \
  X(cuGetErrorName)                       \
  X(cuGetErrorString)                     \
  X(cuDeviceGetCount)                     \
  X(cuDeviceGet)                          \
  X(cuDeviceGetName)                      \
  X(cuDeviceGetAttribute)                 \
  X(cuDeviceTotalMem)                     \
  X(cuDeviceCanAccessPeer)                \
  X(cuDevicePrimaryCtxRetain)             \
  X(cuDevicePrimaryCtxRelease)            \
  X(cuCtxSetCurrent)                      \
  X(cuCtxEnablePeerAccess)                \
  X(cuMemGetInfo)                         \
  X(cuMemAlloc)                           \
  X(cuMemFree)                            \
  X(cuMemHostAlloc)                       \
  X(cuMemFreeHost)                        \
  X(cuMemcpyHtoDAsync)                    \
  X(cuMemcpyDtoHAsync)                    \
  X(cuMemcpyDtoDAsync)                    \
  X(cuMemcpyPeerAsync)                    \
  X(cuMemsetD8Async)                      \
  X(cuMemsetD16Async)                     \
  X(cuMemsetD32Async)                     \
  X(cuStreamCreate)                       \
  X(cuStreamDestroy)                      \
  X(cuStreamWaitEvent)                    \
  X(cuStreamAddCallback)                  \
  X(cuStreamSynchronize)                  \
  X(cuEventCreate)                        \
  X(cuEventDestroy)                       \
  X(cuEventRecord)                        \
  X(cuEventQuery)                         \
  X(cuEventSynchronize)                   \
  X(cuModuleLoadDataEx)                   \
  X(cuModuleUnload)                       \
  X(cuModuleGetFunction)                  \
  X(cuFuncSetAttribute)                   \
  X(cuLaunchKernel)

// Added in CUDA 12.3 and 12.4: null with an older driver, and the code copes.
#define TROUPE_CUDA_OPTIONAL_FUNCTIONS(X) \
  X(cuFuncGetParamInfo)                   \
  X(cuFuncGetName)                        \
  X(cuModuleGetFunctionCount)             \
  X(cuModuleEnumerateFunctions)

#define TROUPE_NVRTC_REQUIRED_FUNCTIONS(X) \
  X(nvrtcGetErrorString)                   \
  X(nvrtcVersion)                          \
  X(nvrtcCreateProgram)                    \
  X(nvrtcDestroyProgram)                   \
  X(nvrtcCompileProgram)                   \
  X(nvrtcGetProgramLogSize)                \
  X(nvrtcGetProgramLog)                    \
  X(nvrtcGetPTXSize)                       \
  X(nvrtcGetPTX)                           \
  X(nvrtcGetCUBINSize)                     \
  X(nvrtcGetCUBIN)

#define TROUPE_NVRTC_OPTIONAL_FUNCTIONS(X) \
  X(nvrtcGetNumSupportedArchs)             \
  X(nvrtcGetSupportedArchs)

#define TROUPE_FUNCTION_POINTER(name) decltype(&::name) name = nullptr;

namespace troupe::detail {

/// The driver API functions troupe calls.
struct cuda_driver {
  TROUPE_CUDA_REQUIRED_FUNCTIONS(TROUPE_FUNCTION_POINTER)
  TROUPE_CUDA_OPTIONAL_FUNCTIONS(TROUPE_FUNCTION_POINTER)
};

/// The NVRTC functions troupe calls.
struct nvrtc_library {
  TROUPE_NVRTC_REQUIRED_FUNCTIONS(TROUPE_FUNCTION_POINTER)
  TROUPE_NVRTC_OPTIONAL_FUNCTIONS(TROUPE_FUNCTION_POINTER)
};

/// A table of functions, or why it could not be loaded.
template <class Functions>
struct loaded {
  Functions functions;
  /// Empty when every required function was found.
  std::string error;
};

/// Loads libcuda.so.1. Calls nothing in it: cuInit is the caller's.
loaded<cuda_driver> load_cuda_driver();

/// Loads the newest NVRTC found (libnvrtc.so.13, .12, then unversioned).
loaded<nvrtc_library> load_nvrtc();

}  // namespace troupe::detail

#undef TROUPE_FUNCTION_POINTER
