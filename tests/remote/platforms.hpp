#pragma once

// The platforms the ICD loader lists: the local one the tests compare against, the same platform
// served by troupe-deviced, and their first devices.
#include <CL/cl.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cl_info.hpp"
#include "troupe/remote/cl_troupe_remote.h"

namespace troupe::remote_test {

inline std::vector<cl_platform_id> all_platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  return platforms;
}

/// The names of the platforms this process's loader lists, in its order: what a server run
/// with the same loader serves (no troupe driver is registered in the test processes).
inline std::vector<std::string> platform_names() {
  std::vector<std::string> names;
  for (auto platform : all_platforms())
    names.push_back(info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME));
  return names;
}

/// `text` split at its newlines, the last line with or without one.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

/// Where troupe serves `platform` from ("host:port"), or "" for a platform of another vendor:
/// only troupe's driver knows the query (cl_troupe_remote).
inline std::string remote_endpoint(cl_platform_id platform) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, CL_PLATFORM_REMOTE_ENDPOINT_TROUPE, 0, nullptr, &size) !=
      CL_SUCCESS) {
    return {};
  }
  return info_string(clGetPlatformInfo, platform,
                     static_cast<cl_platform_info>(CL_PLATFORM_REMOTE_ENDPOINT_TROUPE));
}

inline bool is_troupe_platform(cl_platform_id platform) {
  return !remote_endpoint(platform).empty();
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
  const std::string wanted = info_string(clGetPlatformInfo, local, CL_PLATFORM_NAME);
  for (auto platform : all_platforms()) {
    if (remote_endpoint(platform) == endpoint &&
        info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME).find(wanted) == 0) {
      return platform;
    }
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
