#pragma once

// The platforms the ICD loader lists: the local one the tests compare against, the same platform
// served by troupe-deviced, and their first devices.
#include <CL/cl.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cl_info.hpp"

namespace troupe::remote_test {

inline std::vector<cl_platform_id> all_platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  return platforms;
}

inline bool is_troupe_platform(cl_platform_id platform) {
  return info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME).find("(troupe @") !=
         std::string::npos;
}

/// The name of the local platform the tests serve and compare against: PoCL (CI), or the one
/// whose name contains $TROUPE_REMOTE_TEST_PLATFORM (e.g. "NVIDIA" on a GPU machine).
inline std::string local_platform_name() {
  const char* chosen = std::getenv("TROUPE_REMOTE_TEST_PLATFORM");
  return chosen != nullptr && *chosen != '\0' ? chosen : "Portable Computing Language";
}

/// The local platform, and the same platform served by troupe-deviced at `endpoint`.
inline cl_platform_id local_platform() {
  const std::string wanted = local_platform_name();
  for (auto platform : all_platforms()) {
    if (is_troupe_platform(platform)) continue;
    if (info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME).find(wanted) !=
        std::string::npos) {
      return platform;
    }
  }
  return nullptr;
}
inline cl_platform_id remote_platform(const std::string& endpoint) {
  cl_platform_id local = local_platform();
  if (local == nullptr) return nullptr;
  const std::string wanted =
      info_string(clGetPlatformInfo, local, CL_PLATFORM_NAME) + " (troupe @ " + endpoint + ")";
  for (auto platform : all_platforms()) {
    if (info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME) == wanted) return platform;
  }
  return nullptr;
}

inline cl_device_id first_device(cl_platform_id platform) {
  cl_device_id device = nullptr;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    return nullptr;
  }
  return device;
}

}  // namespace troupe::remote_test
