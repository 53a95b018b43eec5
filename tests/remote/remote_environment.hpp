#pragma once

// The environment of remote_tests: two troupe-deviced servers started before the first OpenCL
// call of the process.
//
// The servers the test process itself uses run as separate processes: the ICD loader (ocl-icd)
// initializes once, under pthread_once, and that initialization runs the troupe ICD's discovery,
// which waits for the server's platform list. A device_server in the same process would answer
// it by calling clGetPlatformIDs, which waits for that same initialization: a deadlock. The
// in-process device_server tests (failure_test.cpp) therefore serve client_helper processes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <csignal>
#include <exception>
#include <fstream>
#include <memory>
#include <string>

#include "deviced_process.hpp"
#include "icd_vendors.hpp"
#include "temp_directory.hpp"

namespace troupe::remote_test {

using namespace std::chrono_literals;

/// Two troupe-deviced servers (one that wants a token) and the variables that point the ICD
/// loader at them. Set up before the process's first OpenCL call.
class remote_environment : public ::testing::Environment {
 public:
  static constexpr const char* token = "s3cret-token";

  void SetUp() override {
    instance_ = this;
    try {
      start();
    } catch (const std::exception& error) {
      FAIL() << "cannot set up the remote test servers: " << error.what();
    }
  }

  void start() {
    directory_ = std::make_unique<temp_directory>();
    const auto& dir = directory_->path();
    std::ofstream(dir / "token") << token << "\n";
    plain_ = start_deviced();
    tokened_ = start_deviced({"--token-file", (dir / "token").string()});
    std::ofstream(dir / "hosts") << "# written by remote_tests\n"
                                 << plain_.endpoint() << "\n"
                                 << tokened_.endpoint() << " " << token << "\n";
    make_vendors_directory(dir / "vendors", true);
    ::setenv("OCL_ICD_VENDORS", (dir / "vendors").c_str(), 1);
    ::setenv("OCL_ICD_FILENAMES", icd_filenames(dir / "vendors").c_str(), 1);
    ::setenv("TROUPE_ICD_HOSTS", (dir / "hosts").c_str(), 1);
  }

  // A server stops with status 0 on SIGTERM. Anything else fails the run: a sanitizer that
  // reported in the server (its report is on this process's stderr) makes it exit nonzero.
  void TearDown() override {
    for (auto* server : {&plain_, &tokened_}) {
      if (!server->process) continue;
      server->process->kill(SIGTERM);
      auto status = server->process->wait(30s);
      if (!status) {
        ADD_FAILURE() << "troupe-deviced on " << server->endpoint()
                      << " did not stop within 30 s of SIGTERM";
      } else if (*status != 0) {
        ADD_FAILURE() << "troupe-deviced on " << server->endpoint() << " exited with status "
                      << *status << " after SIGTERM, expected 0 (see its messages above)";
      }
      server->process.reset();
    }
    directory_.reset();
  }

  static remote_environment& get() { return *instance_; }
  [[nodiscard]] std::string plain_endpoint() const { return plain_.endpoint(); }
  [[nodiscard]] std::string token_endpoint() const { return tokened_.endpoint(); }

 private:
  std::unique_ptr<temp_directory> directory_;
  deviced_process plain_, tokened_;
  static inline remote_environment* instance_ = nullptr;
};

}  // namespace troupe::remote_test
