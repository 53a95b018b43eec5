// Platform names through the driver: the servers' own, so that programs that pick a platform by
// name find it; the server's address only when TROUPE_ICD_PLATFORM_SUFFIX=1 asks for it.
#include <CL/cl.h>

#include <string>
#include <vector>

#include "clients.hpp"
#include "platforms.hpp"

namespace troupe::remote_test {
namespace {

TEST(remote_platform_name, is_the_servers_own_by_default) {
  auto server = serve();
  const auto names = platform_names();
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
  auto expected = platform_names();
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
