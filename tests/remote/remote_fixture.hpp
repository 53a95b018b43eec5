#pragma once

// The fixture of the API tests: the local platform and the same platform through troupe-deviced,
// side by side.
#include <gtest/gtest.h>

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

  side local, remote;
};

}  // namespace troupe::remote_test
