#pragma once

// What the disk cache keeps of an OpenCL program.

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "device/backend.hpp"

namespace troupe::detail {

/// What the disk cache stores for an OpenCL program: the binary plus each kernel's parameters,
/// since OpenCL reports argument info only for programs built from source.
struct opencl_program_image {
  std::vector<unsigned char> binary;
  std::map<std::string, std::vector<kernel_param>> kernels;

  std::vector<std::byte> serialize() const;
  /// Throws troupe::error (errc::device_error) naming `device` when `blob` is damaged.
  static opencl_program_image parse(std::span<const std::byte> blob, const std::string& device);
};

/// OpenCL spells some types two ways, and CL_KERNEL_ARG_TYPE_NAME may give either: the short
/// spelling, without spaces ("uint*", not "unsigned int *"), which launches compare against.
std::string canonical_type(std::string name);

}  // namespace troupe::detail
