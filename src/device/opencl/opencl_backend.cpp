// The OpenCL backend, through the ICD loader: discover_opencl() finds the devices
// (opencl_device.hpp), each with one context and any number of in-order queues (opencl_queue.hpp).
// Commands are flushed as they are enqueued, so polling sees progress. A GPU's copies from and to
// pageable memory go through pinned blocks (staging_pool.hpp), in chunks, so that the host's
// copy of one chunk overlaps the device's of the next. Freed device memory is kept for reuse
// (opencl_memory.hpp).
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_device.hpp"
#include "device/opencl/opencl_errors.hpp"

namespace troupe::detail {

namespace {

/// The value of environment variable `name`: `choices` front when unset; empty, with `why` set,
/// when it is none of them.
std::string setting(const char* name, std::initializer_list<const char*> choices,
                    std::string& why) {
  const char* value = std::getenv(name);
  if (value == nullptr) return *choices.begin();
  for (const char* choice : choices)
    if (std::string_view{value} == choice) return value;
  std::string expected;
  for (const char* choice : choices)
    expected += (expected.empty() ? "'" : " or '") + std::string{choice} + "'";
  why = std::string{"environment variable "} + name + ": expected " + expected + ", found '" +
        value + "'";
  return {};
}

/// CL_PLATFORM_VENDOR ("NVIDIA Corporation"); empty when the driver does not say.
std::string platform_vendor(cl_platform_id platform) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, CL_PLATFORM_VENDOR, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string vendor(size, '\0');
  if (clGetPlatformInfo(platform, CL_PLATFORM_VENDOR, size, vendor.data(), nullptr) != CL_SUCCESS)
    return {};
  return vendor;
}

}  // namespace

backend_discovery discover_opencl() {
  backend_discovery found;
  // "all" stages a CPU device's copies as a GPU's, so that tests on PoCL run the staged paths.
  const std::string staging_mode =
      setting("TROUPE_OPENCL_STAGING", {"auto", "all"}, found.unavailable_reason);
  // "any-thread": queues without the preference for one launching thread (as CUDA's), so that
  // tests on PoCL run that rule too.
  const std::string launching =
      setting("TROUPE_OPENCL_LAUNCHING", {"one-thread", "any-thread"}, found.unavailable_reason);
  // "auto": reads go through the copy thread where the driver blocks in them (NVIDIA's);
  // "copy-thread": on every platform, so that tests on PoCL run that path; "any-thread": never.
  const std::string reading = setting(
      "TROUPE_OPENCL_READING", {"auto", "copy-thread", "any-thread"}, found.unavailable_reason);
  if (!found.unavailable_reason.empty()) return found;
  cl_uint platforms = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &platforms);
  if (status != CL_SUCCESS || platforms == 0) {
    found.unavailable_reason =
        status == CL_SUCCESS || status == -1001  // CL_PLATFORM_NOT_FOUND_KHR
            ? "no OpenCL platform is installed (no ICD in /etc/OpenCL/vendors)"
            : std::string{"clGetPlatformIDs failed: "} + opencl_error_name(status);
    return found;
  }
  std::vector<cl_platform_id> ids(platforms);
  clGetPlatformIDs(platforms, ids.data(), nullptr);
  std::string problems;
  for (auto platform : ids) {
    const bool blocking_reads =
        reading == "copy-thread" ||
        (reading == "auto" && platform_vendor(platform).find("NVIDIA") != std::string::npos);
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
    for (auto id : devices) {
      try {
        found.devices.push_back(std::make_unique<opencl_device>(
            platform, id, staging_mode == "all", launching == "one-thread", blocking_reads));
      } catch (const error& e) {
        problems += (problems.empty() ? "" : "; ") + std::string{e.what()};
      }
    }
  }
  if (found.devices.empty())
    found.unavailable_reason = problems.empty() ? "the OpenCL platforms have no devices" : problems;
  return found;
}

}  // namespace troupe::detail
