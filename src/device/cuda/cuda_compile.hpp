#pragma once

// Compiling CUDA C++ with NVRTC for one device.

#include <string>
#include <string_view>
#include <vector>

#include "device/cuda/cuda_driver.hpp"
#include "device/cuda/cuda_image.hpp"
#include "troupe/device/device_info.hpp"

namespace troupe::detail {

struct cuda_compilation {
  cuda_image image;
  /// NVRTC's log; warnings of a successful build live here.
  std::string log;
};

/// Splits build options on whitespace; double quotes group words and are removed
/// (-I"/my dir" is one option, -I/my dir). Throws troupe::error (errc::invalid_argument) for an
/// unmatched quote.
std::vector<std::string> split_options(std::string_view options);

/// Compiles `source` for a device of `compute_capability`. Without an -arch or
/// --gpu-architecture option, it builds CUBIN for the device's sm_XY, or, when NVRTC does not
/// know that architecture, PTX for the newest it knows below it, which the driver compiles.
/// Throws troupe::error: errc::compile_error with the full log when the source does not compile,
/// errc::device_error when NVRTC fails otherwise.
cuda_compilation compile_cuda(const nvrtc_library& nvrtc, const std::string& source,
                              std::string_view options, version compute_capability,
                              std::string_view device_name);

/// "13.0", or "unknown".
std::string nvrtc_version(const nvrtc_library& nvrtc);

}  // namespace troupe::detail
