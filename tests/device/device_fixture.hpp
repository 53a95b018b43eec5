#pragma once

// Runs each device test once per device of every backend present (PoCL in CI; CUDA and NVIDIA
// OpenCL on a GPU machine).
#include <gtest/gtest.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "troupe/device.hpp"

namespace troupe::test {

inline troupe::config device_config(std::size_t threads = 2) {
  troupe::config cfg;
  cfg.threads = threads;
  cfg.kernel_cache = "off";  // tests of the disk cache name their own directory
  if (const char* mode = std::getenv("TROUPE_DEVICE_COMPLETION")) cfg.device_completion = mode;
  return cfg;
}

/// "<index>_<backend>_<name>" of each device found, usable as a test-name suffix. Discovered
/// once per process: every suite's instantiation and the expected-devices check share it.
inline const std::vector<std::string>& device_names() {
  static const std::vector<std::string> names = [] {
    actor_system sys{device_config(1)};
    std::vector<std::string> found;
    std::size_t i = 0;
    for (const auto& d : sys.devices()) {
      std::string name = std::to_string(i++) + "_" + std::string{to_string(d.backend())} + "_";
      for (char c : d.name()) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      found.push_back(name.substr(0, 60));
    }
    return found;
  }();
  return names;
}

/// Fails the whole run, whatever its filter, when fewer devices are found than expected: as many
/// as TROUPE_TEST_EXPECT_DEVICES says (the two-device reruns set 2), else 1 in CI (CI=true),
/// where setup installs PoCL. A suite that runs once per device would otherwise pass with
/// nothing run, and a test that needs two devices would skip.
class expected_devices_check : public ::testing::Environment {
 public:
  void SetUp() override {
    std::size_t expected = 0;
    if (const char* count = std::getenv("TROUPE_TEST_EXPECT_DEVICES"); count && *count) {
      const char* end = count + std::strlen(count);
      auto [stop, error] = std::from_chars(count, end, expected);
      if (error != std::errc{} || stop != end)
        FAIL() << "TROUPE_TEST_EXPECT_DEVICES: expected a count, found '" << count << "'";
    } else if (const char* ci = std::getenv("CI"); ci && std::string{ci} == "true") {
      expected = 1;
    }
    if (expected == 0) return;
    const auto& names = device_names();
    std::string found;
    for (const auto& name : names) found += (found.empty() ? ": " : ", ") + name;
    if (names.size() < expected) {
      FAIL() << "expected at least " << expected << " device(s) (TROUPE_TEST_EXPECT_DEVICES, or 1 "
             << "where CI=true), found " << names.size() << found;
    }
  }
};

inline const bool expected_devices_registered =
    (::testing::AddGlobalTestEnvironment(new expected_devices_check), true);

/// Lets a device suite have no instances on a machine without devices. (A macro of our own:
/// CMake's gtest_add_tests would read the "TEST(" in GoogleTest's name as a test.)
#define TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(suite) GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(suite)

/// The same kernels in OpenCL C and in CUDA C++.
struct kernel_sources {
  std::string opencl;
  std::string cuda;
  const std::string& for_device(const device& d) const {
    return d.backend() == backend::cuda ? cuda : opencl;
  }
};

inline const kernel_sources& test_kernels() {
  static const kernel_sources sources{
      R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void scale_add(__global float* x, float factor, int addend, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] = x[i] * factor + (float)addend;
}
__kernel void increment(__global int* x, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] += 1;
}
__kernel void sum3(__global const int* a, __global const int* b, __global const int* c,
                   __global int* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = a[i] + b[i] + c[i];
}
__kernel void spin_then_set(__global int* x, int value, uint rounds) {
  int acc = 0;
  for (uint r = 0; r < rounds; ++r) acc += (int)(r & 1u);
  x[get_global_id(0)] = value + (acc < 0 ? 1 : 0);
}
// Types in their long spelling, which launches must match like the short one.
__kernel void count_up(__global unsigned int* out, unsigned int first) {
  out[get_global_id(0)] = first + (unsigned int)get_global_id(0);
}
// More arguments than a launch keeps on the stack, each weighed by its position.
__kernel void weigh_many(__global int* out, int a0, int a1, int a2, int a3, int a4, int a5,
                         int a6, int a7, int a8, int a9, int a10, int a11, int a12, int a13,
                         int a14, int a15, int a16, int a17, int a18) {
  if (get_global_id(0) == 0)
    out[0] = a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8 +
             10 * a9 + 11 * a10 + 12 * a11 + 13 * a12 + 14 * a13 + 15 * a14 + 16 * a15 +
             17 * a16 + 18 * a17 + 19 * a18;
}
)",
      R"(
extern "C" __global__ void add(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void scale_add(float* x, float factor, int addend, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * factor + (float)addend;
}
extern "C" __global__ void increment(int* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
extern "C" __global__ void sum3(const int* a, const int* b, const int* c, int* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i] + c[i];
}
extern "C" __global__ void spin_then_set(int* x, int value, unsigned rounds) {
  int acc = 0;
  for (unsigned r = 0; r < rounds; ++r) acc += (int)(r & 1u);
  x[blockIdx.x * blockDim.x + threadIdx.x] = value + (acc < 0 ? 1 : 0);
}
extern "C" __global__ void count_up(unsigned int* out, unsigned int first) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = first + i;
}
extern "C" __global__ void weigh_many(int* out, int a0, int a1, int a2, int a3, int a4, int a5,
                                      int a6, int a7, int a8, int a9, int a10, int a11, int a12,
                                      int a13, int a14, int a15, int a16, int a17, int a18) {
  if (blockIdx.x * blockDim.x + threadIdx.x == 0)
    out[0] = a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8 +
             10 * a9 + 11 * a10 + 12 * a11 + 13 * a12 + 14 * a13 + 15 * a14 + 16 * a15 +
             17 * a16 + 18 * a17 + 19 * a18;
}
)"};
  return sources;
}

/// A fresh actor system and the device under test.
class device_test : public ::testing::TestWithParam<std::string> {
 protected:
  device_test() : sys(device_config()) {
    auto index = std::stoul(GetParam().substr(0, GetParam().find('_')));
    dev = sys.devices()[index];
  }

  /// No test lets a scheduler worker wait for the device (device_waits).
  void TearDown() override {
    EXPECT_EQ(dev.state()->waits_on_workers(), 0u)
        << "driver calls waited for device '" << dev.name() << "' on a scheduler worker";
  }

  program compile_test_kernels() { return dev.compile(test_kernels().for_device(dev)).get(); }

  actor_system sys;
  device dev;
};

}  // namespace troupe::test
