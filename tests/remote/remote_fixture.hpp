#pragma once

// The fixture of the API tests: the local platform and the same platform through troupe-deviced,
// side by side.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "platforms.hpp"
#include "remote_environment.hpp"
#include "side.hpp"

namespace troupe::remote_test {

/// Fixture of the API tests: the local PoCL side and the same device through troupe-deviced.
class remote_test : public ::testing::Test {
 protected:
  void SetUp() override {
    open_side(local, local_platform(), "local");
    open_side(remote, remote_platform(remote_environment::get().plain_endpoint()), "remote");
  }

  /// The sides a conformance check holds to its CPU reference: the driver always, and the local
  /// platform where it is PoCL, whose behaviour the driver's own checks follow. NVIDIA's (580)
  /// refuses some valid calls (a 1D rectangle with pitches, writes to a 2D array with host
  /// pitches) and lets some invalid ones past (overlapping rectangle copies).
  std::vector<side*> checked_sides() {
    if (local_platform_name().find("Portable Computing Language") == std::string::npos) {
      return {&remote};
    }
    return {&local, &remote};
  }

  /// One case of a conformance check: `outcome(side)` runs it on a side and says how the side
  /// differed from the CPU reference ("" when it did not). Where the local platform is PoCL
  /// both sides must meet the reference. Elsewhere the driver can do no better than the platform
  /// it serves, called directly: the remote side must meet the reference wherever the local
  /// one does, and a case the platform itself gets wrong is reported, not checked.
  void check_case(const std::string& name, const std::function<std::string(side&)>& outcome) {
    SCOPED_TRACE(name);
    if (local_platform_name().find("Portable Computing Language") != std::string::npos) {
      EXPECT_EQ(outcome(local), "") << "local";
      EXPECT_EQ(outcome(remote), "") << "remote";
      return;
    }
    const std::string direct = outcome(local);
    const std::string served = outcome(remote);
    if (direct.empty()) {
      EXPECT_EQ(served, "") << "remote, where " << local_platform_name() << " meets the reference";
    } else {
      std::printf(
          "not checked on %s: \"%s\", which it gets wrong called directly (%s); "
          "through the driver: %s\n",
          local_platform_name().c_str(), name.c_str(), direct.c_str(),
          served.empty() ? "meets the reference" : served.c_str());
    }
  }

  side local, remote;
};

}  // namespace troupe::remote_test
