#pragma once

// A kernel of an OpenCL program, as launches take it.

#include <atomic>
#include <mutex>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_context.hpp"

namespace troupe::detail {

/// A kernel's cl_kernel objects: one per concurrent launch, so that setting arguments and
/// enqueueing never races and never serialises launches on different queues. One spare sits
/// in an atomic slot, so that launches one at a time take no lock.
class opencl_kernel final : public backend_kernel {
 public:
  opencl_kernel(cl_program program, context_ptr context);
  ~opencl_kernel() override;

  /// A cl_kernel for one launch, given back after it; throws troupe::error. Defined here, as is
  /// give_back(), so that every launch inlines both.
  cl_kernel take() {
    if (auto k = spare_.exchange(nullptr, std::memory_order_acquire)) return k;
    {
      std::lock_guard guard{mutex_};
      if (!idle_.empty()) {
        auto k = idle_.back();
        idle_.pop_back();
        return k;
      }
    }
    cl_int status = CL_SUCCESS;
    auto k = clCreateKernel(program_, name.c_str(), &status);
    check_opencl(status, "clCreateKernel", context_->name);
    return k;
  }
  void give_back(cl_kernel k) {
    cl_kernel empty = nullptr;
    if (spare_.compare_exchange_strong(empty, k, std::memory_order_release,
                                       std::memory_order_relaxed))
      return;
    std::lock_guard guard{mutex_};
    idle_.push_back(k);
  }

 private:
  cl_program program_;
  context_ptr context_;
  std::atomic<cl_kernel> spare_{nullptr};
  std::mutex mutex_;
  std::vector<cl_kernel> idle_;
};

}  // namespace troupe::detail
