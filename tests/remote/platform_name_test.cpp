// Platform names through the driver: the servers' own, so that programs that pick a platform by
// name find it; the server's address only when TROUPE_ICD_PLATFORM_SUFFIX=1 asks for it.
#include <CL/cl.h>

#include <string>
#include <vector>

#include "clients.hpp"

namespace troupe::remote_test {
namespace {

// The names of the platforms an in-process server serves: this process's (no troupe driver is
// registered here).
std::vector<std::string> served_names() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  std::vector<std::string> names;
  for (auto platform : platforms) {
    char name[1024] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    names.emplace_back(name);
  }
  return names;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

TEST(remote_platform_name, is_the_servers_own_by_default) {
  auto server = serve();
  const auto names = served_names();
  ASSERT_FALSE(names.empty()) << "this host has no OpenCL platform to serve";
  clients helpers;
  std::string output;
  ASSERT_EQ(helpers.run(endpoint(*server), {"platform-names"}, &output), 0) << output;
  EXPECT_EQ(lines_of(output), names);
  // "0" says the same.
  ASSERT_EQ(helpers.run(endpoint(*server), {"platform-names"}, &output, 120s,
                        {"TROUPE_ICD_PLATFORM_SUFFIX=0"}),
            0)
      << output;
  EXPECT_EQ(lines_of(output), names);
}

TEST(remote_platform_name, carries_the_servers_address_when_asked) {
  auto server = serve();
  auto expected = served_names();
  ASSERT_FALSE(expected.empty()) << "this host has no OpenCL platform to serve";
  for (auto& name : expected) name += " (troupe @ " + endpoint(*server) + ")";
  clients helpers;
  std::string output;
  ASSERT_EQ(helpers.run(endpoint(*server), {"platform-names"}, &output, 120s,
                        {"TROUPE_ICD_PLATFORM_SUFFIX=1"}),
            0)
      << output;
  EXPECT_EQ(lines_of(output), expected);
}

}  // namespace
}  // namespace troupe::remote_test
