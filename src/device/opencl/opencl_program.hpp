#pragma once

// A built OpenCL program and the kernels in it.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_context.hpp"
#include "device/opencl/opencl_program_image.hpp"

namespace troupe::detail {

/// A built cl_program, with the image the disk cache keeps of it; its kernels are made on first
/// use, checked against the parameters the image lists.
class opencl_program final : public backend_program {
 public:
  opencl_program(cl_program program, context_ptr context, std::string log,
                 opencl_program_image image)
      : program_(program),
        context_(std::move(context)),
        log_(std::move(log)),
        image_(std::move(image)) {}
  ~opencl_program() override;

  /// Fetched only when asked for (by the disk cache): drivers may produce it lazily.
  std::vector<std::byte> binary() const override;
  std::string build_log() const override { return log_; }

  std::unique_ptr<backend_kernel> kernel(const std::string& name) override;

 private:
  cl_program program_;
  context_ptr context_;
  std::string log_;
  mutable opencl_program_image image_;
};

}  // namespace troupe::detail
