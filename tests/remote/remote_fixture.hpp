#pragma once

// The fixture of the API tests: the local platform and the same platform through troupe-deviced,
// side by side.
#include <gtest/gtest.h>

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

  side local, remote;
};

}  // namespace troupe::remote_test
