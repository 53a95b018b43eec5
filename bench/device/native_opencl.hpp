// OpenCL 1.2 for the native baseline: owners for its objects and the few steps every benchmark
// repeats (a context per device, building a kernel, setting arguments, pinned host memory).
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace troupe::bench::opencl {

/// Throws std::runtime_error naming the call and the status when `status` is not CL_SUCCESS.
void check(cl_int status, std::string_view call);

/// Sole owner of one OpenCL object, released with `Release` when the owner goes.
template <class Handle, cl_int (*Release)(Handle)>
class owned {
 public:
  owned() = default;
  explicit owned(Handle handle) noexcept : handle_(handle) {}
  ~owned() {
    if (handle_) Release(handle_);
  }
  owned(owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  owned& operator=(owned&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Handle get() const noexcept { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using context = owned<cl_context, clReleaseContext>;
using queue = owned<cl_command_queue, clReleaseCommandQueue>;
using memory = owned<cl_mem, clReleaseMemObject>;
using kernel = owned<cl_kernel, clReleaseKernel>;

/// Every OpenCL device, in the order troupe lists them: platform by platform, all device types.
std::vector<cl_device_id> all_devices();

/// CL_DEVICE_NAME of `id`.
std::string device_name(cl_device_id id);

/// One device with a context of its own, as a program written against OpenCL alone would have.
class device {
 public:
  explicit device(cl_device_id id);

  cl_device_id id() const noexcept { return id_; }
  cl_context context() const noexcept { return context_.get(); }
  const std::string& name() const noexcept { return name_; }

  /// A new in-order queue.
  queue make_queue() const;

  /// `bytes` of device memory.
  memory allocate(std::size_t bytes) const;

  /// Builds `source` and returns its kernel `name`; throws with the build log on failure. The
  /// kernel keeps its program alive.
  kernel build(const std::string& source, const char* name) const;

 private:
  cl_device_id id_;
  std::string name_;
  opencl::context context_;
};

/// Sets the arguments of `target` in order (buffers as cl_mem, scalars by value).
template <class... Arguments>
void set_arguments(cl_kernel target, const Arguments&... arguments) {
  cl_uint index = 0;
  (check(clSetKernelArg(target, index++, sizeof(Arguments), &arguments), "clSetKernelArg"), ...);
}

/// `count` elements of pinned host memory, the way OpenCL hands it out: a buffer allocated with
/// CL_MEM_ALLOC_HOST_PTR and mapped once (as troupe's host_buffer does).
template <class T>
class pinned_memory {
 public:
  pinned_memory(const device& owner, std::size_t count)
      : mapper_(owner.make_queue()), count_(count) {
    cl_int status = CL_SUCCESS;
    buffer_ = memory{clCreateBuffer(owner.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                    count * sizeof(T), nullptr, &status)};
    check(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
    data_ = static_cast<T*>(clEnqueueMapBuffer(mapper_.get(), buffer_.get(), CL_TRUE,
                                               CL_MAP_READ | CL_MAP_WRITE, 0, count * sizeof(T), 0,
                                               nullptr, nullptr, &status));
    check(status, "clEnqueueMapBuffer");
  }
  ~pinned_memory() {
    clEnqueueUnmapMemObject(mapper_.get(), buffer_.get(), data_, 0, nullptr, nullptr);
    clFinish(mapper_.get());
  }
  pinned_memory(const pinned_memory&) = delete;
  pinned_memory& operator=(const pinned_memory&) = delete;

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  T* begin() const noexcept { return data_; }
  T* end() const noexcept { return data_ + count_; }

 private:
  queue mapper_;
  memory buffer_;
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace troupe::bench::opencl
