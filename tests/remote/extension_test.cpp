// The extensions the driver advertises: the local device's, less those it does not forward.
#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cl_info.hpp"
#include "remote/icd/forwarded_extensions.hpp"
#include "remote_fixture.hpp"

namespace troupe::remote_test {
namespace {

using troupe::remote::icd::forwarded_extensions;

// OpenCL 3.0's queries, which the tests' 1.2 headers do not name.
constexpr cl_platform_info platform_extensions_with_version = 0x0907;
constexpr cl_device_info device_extensions_with_version = 0x1060;

// Extensions whose entry points, properties or binaries the driver does not carry: whatever a
// server's device says, a program must not be told they work.
const std::vector<std::string> never_forwarded = {
    "cl_khr_command_buffer", "cl_khr_spir",
    "cl_khr_gl_sharing",     "cl_khr_il_program",
    "cl_khr_subgroups",      "cl_pocl_content_size",
    "cl_khr_gl_event",       "cl_khr_dx9_media_sharing",
    "cl_khr_egl_image",      "cl_khr_semaphore",
    "cl_khr_mipmap_image",   "cl_khr_create_command_queue"};

std::vector<std::string> words(const std::string& list) {
  std::istringstream in(list);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

bool forwarded(const std::string& name) {
  return std::find(std::begin(forwarded_extensions), std::end(forwarded_extensions), name) !=
         std::end(forwarded_extensions);
}

std::vector<std::string> keep_forwarded(const std::vector<std::string>& names) {
  std::vector<std::string> kept;
  for (const auto& name : names) {
    if (forwarded(name)) kept.push_back(name);
  }
  return kept;
}

/// A cl_name_version array as (name, version) pairs.
std::vector<std::pair<std::string, cl_uint>> named_versions(const std::vector<unsigned char>& raw) {
  constexpr std::size_t entry = sizeof(cl_uint) + 64;  // cl_version, char[CL_NAME_VERSION_MAX]
  std::vector<std::pair<std::string, cl_uint>> out;
  for (std::size_t at = 0; at + entry <= raw.size(); at += entry) {
    cl_uint version = 0;
    std::memcpy(&version, raw.data() + at, sizeof version);
    const char* name = reinterpret_cast<const char*>(raw.data() + at + sizeof version);
    out.emplace_back(std::string(name, strnlen(name, 64)), version);
  }
  return out;
}

TEST_F(remote_test, device_extensions_are_the_local_ones_the_driver_forwards) {
  const auto native = words(info_string(clGetDeviceInfo, local.device, CL_DEVICE_EXTENSIONS));
  const auto through = words(info_string(clGetDeviceInfo, remote.device, CL_DEVICE_EXTENSIONS));
  ASSERT_FALSE(native.empty()) << "the local device lists no extension: nothing is checked";
  for (const auto& name : through) EXPECT_TRUE(forwarded(name)) << name << " is advertised";
  for (const auto& name : never_forwarded) {
    EXPECT_EQ(std::count(through.begin(), through.end(), name), 0) << name << " is advertised";
  }
  EXPECT_EQ(through, keep_forwarded(native));
}

TEST_F(remote_test, platform_extensions_are_the_forwarded_ones_and_troupes) {
  const auto native = words(info_string(clGetPlatformInfo, local.platform, CL_PLATFORM_EXTENSIONS));
  const auto through =
      words(info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_EXTENSIONS));
  auto expected = keep_forwarded(native);
  if (std::count(expected.begin(), expected.end(), "cl_khr_icd") == 0) {
    expected.push_back("cl_khr_icd");
  }
  expected.push_back("cl_troupe_remote");
  EXPECT_EQ(through, expected);
  for (const auto& name : never_forwarded) {
    EXPECT_EQ(std::count(through.begin(), through.end(), name), 0) << name << " is advertised";
  }
}

TEST_F(remote_test, extensions_with_version_agree_with_the_extension_lists) {
  std::size_t size = 0;
  if (clGetDeviceInfo(local.device, device_extensions_with_version, 0, nullptr, &size) !=
      CL_SUCCESS) {
    GTEST_SKIP() << "the local device is older than OpenCL 3.0: no extensions with version";
  }
  const auto native =
      named_versions(info_bytes(clGetDeviceInfo, local.device, device_extensions_with_version));
  const auto through =
      named_versions(info_bytes(clGetDeviceInfo, remote.device, device_extensions_with_version));
  ASSERT_FALSE(native.empty());
  std::vector<std::pair<std::string, cl_uint>> expected;
  for (const auto& entry : native) {
    if (forwarded(entry.first)) expected.push_back(entry);
  }
  EXPECT_EQ(through, expected);
  std::vector<std::string> names;
  for (const auto& entry : through) names.push_back(entry.first);
  EXPECT_EQ(names, words(info_string(clGetDeviceInfo, remote.device, CL_DEVICE_EXTENSIONS)));

  const auto platform_native = named_versions(
      info_bytes(clGetPlatformInfo, local.platform, platform_extensions_with_version));
  const auto platform_through = named_versions(
      info_bytes(clGetPlatformInfo, remote.platform, platform_extensions_with_version));
  for (const auto& entry : platform_through) {
    EXPECT_TRUE(forwarded(entry.first) || entry.first == "cl_troupe_remote")
        << entry.first << " is advertised";
  }
  std::vector<std::pair<std::string, cl_uint>> platform_expected;
  for (const auto& entry : platform_native) {
    if (forwarded(entry.first)) platform_expected.push_back(entry);
  }
  const auto without_troupe = [&] {
    auto kept = platform_through;
    std::erase_if(kept, [](const auto& entry) { return entry.first == "cl_troupe_remote"; });
    return kept;
  }();
  EXPECT_EQ(without_troupe, platform_expected);
}

TEST_F(remote_test, shared_virtual_memory_is_not_offered) {
  // OpenCL 2.0's SVM has entry points the driver does not forward (clSVMAlloc...): a program
  // that sees capabilities calls them and fails, so the driver reports none, whatever the
  // server's device can do.
  constexpr cl_device_info svm_capabilities = 0x1053;  // CL_DEVICE_SVM_CAPABILITIES
  std::size_t size = 0;
  if (clGetDeviceInfo(local.device, svm_capabilities, 0, nullptr, &size) != CL_SUCCESS) {
    GTEST_SKIP() << "the local device is older than OpenCL 2.0: nothing to hide";
  }
  EXPECT_EQ(info<cl_bitfield>(clGetDeviceInfo, remote.device, svm_capabilities), 0u);
}

}  // namespace
}  // namespace troupe::remote_test
