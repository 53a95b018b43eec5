#pragma once

// client_helper processes for the failure tests, and in-process servers for them to reach.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "child_process.hpp"
#include "icd_vendors.hpp"
#include "temp_directory.hpp"
#include "troupe/remote/device_server.hpp"

namespace troupe::remote_test {

using namespace std::chrono_literals;

/// An in-process server on 127.0.0.1 and a free port, accepting in the background.
inline std::unique_ptr<remote::server::device_server> serve(
    remote::server::server_options options = {}) {
  options.address = "127.0.0.1";
  options.port = 0;
  auto server = std::make_unique<remote::server::device_server>(options);
  server->start();
  return server;
}

/// Environments for client_helper processes: a vendors directory with only troupe's ICD, and
/// one hostfile per set of servers.
class clients {
 public:
  clients() { make_vendors_directory(directory_.path() / "vendors", true, false); }

  /// The variables that point a helper at `hosts` ("host:port [token]" lines).
  std::vector<std::string> environment(const std::string& hosts) {
    auto file = directory_.path() / ("hosts-" + std::to_string(files_++));
    std::ofstream(file) << hosts << "\n";
    return {"OCL_ICD_VENDORS=" + (directory_.path() / "vendors").string(),
            "OCL_ICD_FILENAMES=" + icd_filenames(directory_.path() / "vendors"),
            "TROUPE_ICD_HOSTS=" + file.string(), "TROUPE_ICD_CONNECT_TIMEOUT_MS=5000"};
  }

  /// Starts a helper with `args` against `hosts`, with `extra` variables ("NAME=value").
  std::unique_ptr<child_process> start(const std::string& hosts, std::vector<std::string> args,
                                       const std::vector<std::string>& extra = {}) {
    args.insert(args.begin(), TROUPE_CLIENT_HELPER);
    auto variables = environment(hosts);
    variables.insert(variables.end(), extra.begin(), extra.end());
    return std::make_unique<child_process>(args, variables);
  }

  /// Runs a helper to its end; returns its exit code, or -1 if it did not end within `limit`.
  int run(const std::string& hosts, std::vector<std::string> args, std::string* output = nullptr,
          std::chrono::seconds limit = 120s, const std::vector<std::string>& extra = {}) {
    auto helper = start(hosts, std::move(args), extra);
    while (helper->read_line(limit)) {
    }
    auto code = helper->wait(limit);
    if (output != nullptr) *output = helper->output();
    return code.value_or(-1);
  }

  /// The number of troupe platforms a helper sees with `hosts`.
  int count_platforms(const std::string& hosts) {
    std::string output;
    EXPECT_EQ(run(hosts, {"count-platforms"}, &output), 0) << output;
    return output.empty() ? -1 : std::stoi(output);
  }

 private:
  temp_directory directory_;
  int files_ = 0;
};

inline std::string endpoint(const remote::server::device_server& server) {
  return "127.0.0.1:" + std::to_string(server.port());
}

}  // namespace troupe::remote_test
