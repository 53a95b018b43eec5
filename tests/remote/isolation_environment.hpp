#pragma once

// The environment of remote_isolation_tests: one troupe-deviced with small per-session quotas
// (two request connections a session, too), listed twice in the hostfile, so that this one process
// holds two sessions of it (two platforms) and can check what one session does to the other.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <csignal>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "deviced_process.hpp"
#include "icd_vendors.hpp"
#include "platforms.hpp"
#include "side.hpp"
#include "temp_directory.hpp"
#include "troupe/remote/cl_troupe_remote.h"

namespace troupe::remote_test {

/// The quotas of the server every isolation test uses.
inline constexpr std::size_t device_memory_quota = 1 << 20;
inline constexpr std::size_t host_memory_quota = 1 << 20;
inline constexpr std::size_t object_quota = 64;
inline constexpr std::size_t connection_quota = 2;

/// One troupe-deviced with the quotas above, reached through two hostfile entries.
class isolation_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    instance_ = this;
    try {
      directory_ = std::make_unique<temp_directory>();
      const auto& dir = directory_->path();
      server_ = start_deviced({"--session-device-memory", std::to_string(device_memory_quota),
                               "--session-host-memory", std::to_string(host_memory_quota),
                               "--session-objects", std::to_string(object_quota),
                               "--max-session-connections", std::to_string(connection_quota)});
      std::ofstream(dir / "hosts") << server_.endpoint() << "\n" << server_.endpoint() << "\n";
      make_vendors_directory(dir / "vendors", true);
      ::setenv("OCL_ICD_VENDORS", (dir / "vendors").c_str(), 1);
      ::setenv("OCL_ICD_FILENAMES", icd_filenames(dir / "vendors").c_str(), 1);
      ::setenv("TROUPE_ICD_HOSTS", (dir / "hosts").c_str(), 1);
    } catch (const std::exception& error) {
      FAIL() << "cannot set up the isolation test server: " << error.what();
    }
  }

  // The server must still run, and stop with status 0: a test that crashed it fails here.
  void TearDown() override {
    if (server_.process) {
      server_.process->kill(SIGTERM);
      auto status = server_.process->wait(30s);
      if (!status) {
        ADD_FAILURE() << "troupe-deviced did not stop within 30 s of SIGTERM";
      } else if (*status != 0) {
        ADD_FAILURE() << "troupe-deviced exited with status " << *status
                      << " after SIGTERM, expected 0 (it died, or see its messages above)";
      }
      server_.process.reset();
    }
    directory_.reset();
  }

  static isolation_environment& get() { return *instance_; }
  [[nodiscard]] std::string endpoint() const { return server_.endpoint(); }

 private:
  std::unique_ptr<temp_directory> directory_;
  deviced_process server_;
  static inline isolation_environment* instance_ = nullptr;
};

/// The troupe platforms served from `endpoint` whose name holds the local platform's, in
/// hostfile order: one per session.
inline std::vector<cl_platform_id> platforms_at(const std::string& endpoint) {
  std::vector<cl_platform_id> found;
  for (auto platform : all_platforms()) {
    char where[256] = {}, name[256] = {};
    if (clGetPlatformInfo(platform, CL_PLATFORM_REMOTE_ENDPOINT_TROUPE, sizeof where - 1, where,
                          nullptr) == CL_SUCCESS &&
        clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr) ==
            CL_SUCCESS &&
        endpoint == where && std::string(name).find(local_platform_name()) != std::string::npos) {
      found.push_back(platform);
    }
  }
  return found;
}

/// Fixture of the isolation tests: a device of each of the two sessions, and the local one.
class isolation_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sessions = platforms_at(isolation_environment::get().endpoint());
    ASSERT_EQ(sessions.size(), 2u) << "the hostfile lists the server twice: two sessions";
    open_side(first, sessions[0], "first session");
    open_side(second, sessions[1], "second session");
    open_side(local, local_platform(), "local");
  }

  side first, second, local;
};

}  // namespace troupe::remote_test
