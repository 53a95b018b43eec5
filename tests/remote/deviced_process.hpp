#pragma once

// Starting a troupe-deviced server as a process of its own, its log read or not.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace troupe::remote_test {

using namespace std::chrono_literals;

/// A troupe-deviced process on 127.0.0.1 and a free port.
struct deviced_process {
  std::unique_ptr<child_process> process;
  std::uint16_t port = 0;
  [[nodiscard]] std::string endpoint() const { return "127.0.0.1:" + std::to_string(port); }
};

/// Starts troupe-deviced with `extra` arguments and reads its port from its first line. Call it
/// before pointing OCL_ICD_VENDORS at a test directory: the server serves the host's platforms.
inline deviced_process start_deviced(std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{TROUPE_DEVICED, "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  deviced_process started;
  started.process = std::make_unique<child_process>(argv);
  auto line = started.process->read_line(30s);
  const std::string marker = "listening on 127.0.0.1:";
  if (!line || line->find(marker) == std::string::npos) {
    throw std::runtime_error("troupe-deviced did not report its port (first line: '" +
                             line.value_or("none") + "')");
  }
  started.port =
      static_cast<std::uint16_t>(std::stoi(line->substr(line->find(marker) + marker.size())));
  return started;
}

/// Starts troupe-deviced with `extra` arguments from a shell that first runs `limits` (ulimit
/// commands); its log (stderr) comes through the same pipe as its stdout, so that a test can
/// read it.
inline deviced_process start_deviced_logged(std::vector<std::string> extra = {},
                                            const std::string& limits = "true") {
  std::vector<std::string> argv{
      "/bin/sh", "-c", limits + " && exec \"$@\" 2>&1", "sh", TROUPE_DEVICED, "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  deviced_process started;
  started.process = std::make_unique<child_process>(argv);
  const std::string marker = "troupe-deviced: listening on 127.0.0.1:";
  auto line = started.process->wait_for_line(marker, 60s);
  if (!line) {
    throw std::runtime_error("troupe-deviced did not report its port; it wrote:\n" +
                             started.process->output());
  }
  started.port = static_cast<std::uint16_t>(std::stoi(line->substr(marker.size())));
  return started;
}

}  // namespace troupe::remote_test
