#pragma once

// A loaded CUDA module and the kernels in it.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "device/backend.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/cuda_image.hpp"

namespace troupe::detail {

/// A module loaded into a context; kernels keep it loaded while they live.
class cuda_module {
 public:
  /// cuModuleLoadDataEx; throws troupe::error with the driver's JIT log.
  cuda_module(std::shared_ptr<cuda_context> owner, const cuda_image& image);
  ~cuda_module();
  cuda_module(const cuda_module&) = delete;
  cuda_module& operator=(const cuda_module&) = delete;

  const std::shared_ptr<cuda_context> context;
  CUmodule handle = nullptr;
};

class cuda_kernel final : public backend_kernel {
 public:
  cuda_kernel(std::shared_ptr<cuda_module> module, CUfunction function);

  CUfunction function() const noexcept { return function_; }
  const cuda_context& context() const noexcept { return *module_->context; }

  /// Raises the kernel's dynamic shared-memory limit to at least `bytes`: beyond the default
  /// 48 KiB a kernel must opt in. Only ever raised, so launches on other queues stay valid.
  void allow_shared_bytes(std::size_t bytes);

 private:
  std::shared_ptr<cuda_module> module_;
  CUfunction function_;
  std::mutex shared_mutex_;
  std::atomic<std::size_t> shared_allowed_{0};
};

class cuda_program final : public backend_program {
 public:
  /// Loads `image`; throws troupe::error.
  cuda_program(std::shared_ptr<cuda_context> context, cuda_image image, std::string log);

  std::vector<std::byte> binary() const override;
  std::string build_log() const override { return log_; }
  std::unique_ptr<backend_kernel> kernel(const std::string& name) override;

 private:
  cuda_image image_;
  std::string log_;
  std::shared_ptr<cuda_module> module_;
};

}  // namespace troupe::detail
