// The CUDA driver API and NVRTC for the native baseline, loaded at run time with dlopen, so that
// bench-device starts, and runs its OpenCL rows, on machines without an NVIDIA driver. Only what
// the baseline calls is here, plus small owners for the driver's objects.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// Functions named as cuda.h spells them. X's argument is macro-expanded before X sees it, so
// `cuMemAlloc` becomes the member `cuMemAlloc_v2` and the symbol "cuMemAlloc_v2": the function a
// program compiled against this cuda.h would call.
#define TROUPE_BENCH_CUDA_FUNCTIONS(X) \
  X(cuInit)                            \
  X(cuGetErrorName)                    \
  X(cuDeviceGetCount)                  \
  X(cuDeviceGet)                       \
  X(cuDeviceGetName)                   \
  X(cuDeviceGetAttribute)              \
  X(cuDevicePrimaryCtxRetain)          \
  X(cuDevicePrimaryCtxRelease)         \
  X(cuCtxSetCurrent)                   \
  X(cuCtxSynchronize)                  \
  X(cuMemAlloc)                        \
  X(cuMemFree)                         \
  X(cuMemHostAlloc)                    \
  X(cuMemFreeHost)                     \
  X(cuMemcpyHtoD)                      \
  X(cuMemcpyDtoH)                      \
  X(cuMemcpyHtoDAsync)                 \
  X(cuMemcpyDtoHAsync)                 \
  X(cuMemsetD32)                       \
  X(cuStreamCreate)                    \
  X(cuStreamDestroy)                   \
  X(cuStreamSynchronize)               \
  X(cuModuleLoadData)                  \
  X(cuModuleUnload)                    \
  X(cuModuleGetFunction)               \
  X(cuLaunchKernel)

#define TROUPE_BENCH_NVRTC_FUNCTIONS(X) \
  X(nvrtcGetErrorString)                \
  X(nvrtcCreateProgram)                 \
  X(nvrtcDestroyProgram)                \
  X(nvrtcCompileProgram)                \
  X(nvrtcGetProgramLogSize)             \
  X(nvrtcGetProgramLog)                 \
  X(nvrtcGetNumSupportedArchs)          \
  X(nvrtcGetSupportedArchs)             \
  X(nvrtcGetCUBINSize)                  \
  X(nvrtcGetCUBIN)                      \
  X(nvrtcGetPTXSize)                    \
  X(nvrtcGetPTX)

#define TROUPE_BENCH_FUNCTION_POINTER(name) decltype(&::name) name = nullptr;

namespace troupe::bench::cuda {

/// The functions of libcuda.so.1 and of NVRTC that the baseline calls.
struct api {
  TROUPE_BENCH_CUDA_FUNCTIONS(TROUPE_BENCH_FUNCTION_POINTER)
  TROUPE_BENCH_NVRTC_FUNCTIONS(TROUPE_BENCH_FUNCTION_POINTER)
};

/// The driver and NVRTC, loaded and cuInit'ed on the first call; null with `why` set when either
/// is missing or the driver finds no device.
const api* load(std::string& why);

/// The loaded table; only valid after load() succeeded.
const api& functions();

/// Throws std::runtime_error naming the call and the driver's error when `result` is not
/// CUDA_SUCCESS.
void check(CUresult result, std::string_view call);

/// One CUDA device through its primary context, the context troupe uses too, so both sides share
/// it and no context switch separates their runs.
class device {
 public:
  explicit device(int ordinal);
  ~device();
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  const std::string& name() const noexcept { return name_; }
  CUdevice handle() const noexcept { return device_; }
  CUcontext context() const noexcept { return context_; }

  /// Makes the context current on the calling thread; every native run starts with it, since
  /// troupe may have left another device's context current.
  void make_current() const;

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
};

/// A stream of `on`.
class stream {
 public:
  explicit stream(const device& on);
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  CUstream get() const noexcept { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

/// `bytes` of memory on `on`.
class device_memory {
 public:
  device_memory(const device& on, std::size_t bytes);
  ~device_memory();
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  CUdeviceptr get() const noexcept { return address_; }

 private:
  CUdeviceptr address_ = 0;
};

/// `count` elements of pinned host memory, allocated through `on` (cuMemHostAlloc, portable to
/// every context, as troupe's host_buffer is).
template <class T>
class pinned_memory {
 public:
  pinned_memory(const device& on, std::size_t count) : count_(count) {
    on.make_current();
    void* data = nullptr;
    check(functions().cuMemHostAlloc(&data, count * sizeof(T), CU_MEMHOSTALLOC_PORTABLE),
          "cuMemHostAlloc");
    data_ = static_cast<T*>(data);
  }
  ~pinned_memory() { functions().cuMemFreeHost(data_); }
  pinned_memory(const pinned_memory&) = delete;
  pinned_memory& operator=(const pinned_memory&) = delete;

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  T* begin() const noexcept { return data_; }
  T* end() const noexcept { return data_ + count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// A module compiled from CUDA C++ by NVRTC for `target` and loaded into its context, which it
/// leaves current.
class module {
 public:
  /// Throws std::runtime_error with the compiler's log when the source does not compile.
  module(const device& target, const std::string& source, const std::vector<std::string>& options);
  ~module();
  module(const module&) = delete;
  module& operator=(const module&) = delete;

  CUfunction function(const char* name) const;

 private:
  const device& owner_;  // outlives the module: unloading needs its context current
  CUmodule module_ = nullptr;
};

/// Sizes along x, y and z of a grid or a block (dim3 lives in the runtime API, not in cuda.h).
struct dimensions {
  unsigned x = 1;
  unsigned y = 1;
  unsigned z = 1;
};

/// Launches `kernel` on `on` with `arguments` (each passed by address, as cuLaunchKernel takes
/// them).
template <class... Arguments>
void launch(CUfunction kernel, CUstream on, dimensions grid, dimensions block,
            Arguments... arguments) {
  void* parameters[] = {static_cast<void*>(&arguments)..., nullptr};
  check(functions().cuLaunchKernel(kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, on,
                                   parameters, nullptr),
        "cuLaunchKernel");
}

/// Blocks of `block` threads covering `count` items.
inline unsigned blocks_for(std::size_t count, unsigned block) {
  return static_cast<unsigned>((count + block - 1) / block);
}

}  // namespace troupe::bench::cuda
