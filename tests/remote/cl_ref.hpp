#pragma once

// OpenCL handles that release themselves.
#include <CL/cl.h>

#include <utility>

namespace troupe::remote_test {

/// Owns one reference to an OpenCL object.
template <class Handle, cl_int (*Release)(Handle)>
class cl_ref {
 public:
  cl_ref() = default;
  explicit cl_ref(Handle handle) : handle_(handle) {}
  cl_ref(cl_ref&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  cl_ref& operator=(cl_ref&& other) noexcept {
    reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  cl_ref(const cl_ref&) = delete;
  cl_ref& operator=(const cl_ref&) = delete;
  ~cl_ref() { reset(); }

  void reset(Handle handle = nullptr) {
    if (handle_ != nullptr) Release(handle_);
    handle_ = handle;
  }
  /// Where an OpenCL call writes a new handle (an event, say); drops the old one first.
  Handle* out() {
    reset();
    return &handle_;
  }
  Handle release() { return std::exchange(handle_, nullptr); }
  [[nodiscard]] Handle get() const { return handle_; }
  /// A one-element list (a wait list, say).
  [[nodiscard]] const Handle* ptr() const { return &handle_; }
  operator Handle() const { return handle_; }  // NOLINT: passed straight to OpenCL calls

 private:
  Handle handle_ = nullptr;
};

using context_ref = cl_ref<cl_context, clReleaseContext>;
using queue_ref = cl_ref<cl_command_queue, clReleaseCommandQueue>;
using mem_ref = cl_ref<cl_mem, clReleaseMemObject>;
using program_ref = cl_ref<cl_program, clReleaseProgram>;
using kernel_ref = cl_ref<cl_kernel, clReleaseKernel>;
using event_ref = cl_ref<cl_event, clReleaseEvent>;
using sampler_ref = cl_ref<cl_sampler, clReleaseSampler>;

}  // namespace troupe::remote_test
