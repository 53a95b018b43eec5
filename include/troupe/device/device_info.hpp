#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/core/node_id.hpp"

namespace troupe {

/// The programming interface a device is driven through.
enum class backend : std::uint8_t { opencl, cuda };

/// What kind of processor a device is.
enum class device_type : std::uint8_t { gpu, cpu, accelerator, other };

std::string_view to_string(backend b) noexcept;
std::string_view to_string(device_type t) noexcept;

/// A major.minor version: an OpenCL version or a CUDA compute capability. Compared as a pair,
/// so 8.0 is newer than 7.5.
struct version {
  int major = 0;
  int minor = 0;

  friend auto operator<=>(const version&, const version&) = default;
  friend bool operator==(const version&, const version&) = default;
};

std::string to_string(version v);

/// What a device is, as its driver reports it.
struct device_info {
  std::string name;
  std::string vendor;
  /// The driver's own version string.
  std::string driver;
  troupe::backend backend = troupe::backend::opencl;
  device_type type = device_type::other;
  std::uint64_t global_memory = 0;
  unsigned compute_units = 0;
  std::size_t max_work_group_size = 0;
  /// OpenCL devices: the device's OpenCL version; zero for CUDA devices.
  version opencl_version;
  /// CUDA devices: the compute capability; zero for OpenCL devices.
  version compute_capability;
  /// The node of the job whose process drives the device (0 outside an MPI job).
  node_id node = 0;
  /// Whether this process drives the device; false for a device of another node, which is
  /// used through that node (the net layer).
  bool local = true;
};

}  // namespace troupe
