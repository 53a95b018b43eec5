// Servers that stop answering, kernels that run long, and servers whose own OpenCL loader has
// troupe's driver registered: the driver tells them apart and nothing hangs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CL/cl.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "cl_checks.hpp"
#include "clients.hpp"
#include "deviced_process.hpp"
#include "icd_vendors.hpp"
#include "platforms.hpp"
#include "temp_directory.hpp"

namespace troupe::remote_test {
namespace {

// Platform names in order: the loaders of the test and of the server may list them in
// different orders.
std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// A port nothing listens on now (the kernel's pick for port 0), for a server that must know
// its port before it starts: its hostfile names it.
std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// A troupe-deviced on a port chosen here, whose own loader has troupe's driver registered next
// to the system's platforms and whose hostfile names `hosts`.
deviced_process start_with_driver(std::uint16_t port, const std::string& hosts,
                                  const temp_directory& directory) {
  const auto vendors = directory.path() / ("vendors-" + std::to_string(port));
  make_vendors_directory(vendors, true, true);
  const auto hostfile = directory.path() / ("hosts-" + std::to_string(port));
  std::ofstream(hostfile) << hosts << "\n";
  deviced_process started;
  started.port = port;
  // A long connect timeout: a driver that waited for an answer from this very server would
  // wait for all of it, far past the 30 s the server has to report its port.
  started.process = std::make_unique<child_process>(
      std::vector<std::string>{TROUPE_DEVICED, "--port", std::to_string(port)},
      std::vector<std::string>{
          "OCL_ICD_VENDORS=" + vendors.string(), "OCL_ICD_FILENAMES=" + icd_filenames(vendors),
          "TROUPE_ICD_HOSTS=" + hostfile.string(), "TROUPE_ICD_CONNECT_TIMEOUT_MS=600000"});
  auto line = started.process->read_line(30s);
  if (!line || line->find("listening on") == std::string::npos) {
    throw std::runtime_error("troupe-deviced on port " + std::to_string(port) +
                             " did not start within 30 s (first line: '" + line.value_or("none") +
                             "')");
  }
  return started;
}

TEST(remote_liveness, a_server_with_the_driver_and_itself_in_its_hostfile_serves_its_platforms) {
  const auto names = sorted(platform_names());
  ASSERT_FALSE(names.empty()) << "this host has no OpenCL platform to serve";
  temp_directory directory;
  const std::uint16_t port = free_port();
  deviced_process server;
  ASSERT_NO_THROW(server = start_with_driver(port, "127.0.0.1:" + std::to_string(port), directory));
  clients helpers;
  std::string output;
  ASSERT_EQ(helpers.run(server.endpoint(), {"platform-names"}, &output), 0) << output;
  EXPECT_EQ(sorted(lines_of(output)), names) << "a server lists exactly its host's own platforms";
  ASSERT_EQ(helpers.run(server.endpoint(), {"check-loop", "3"}, &output), 0) << output;
}

TEST(remote_liveness, two_servers_that_name_each_other_serve_only_their_own_platforms) {
  const auto names = sorted(platform_names());
  ASSERT_FALSE(names.empty()) << "this host has no OpenCL platform to serve";
  temp_directory directory;
  const std::uint16_t first_port = free_port();
  std::uint16_t second_port = free_port();
  while (second_port == first_port) second_port = free_port();
  const std::string first = "127.0.0.1:" + std::to_string(first_port);
  const std::string second = "127.0.0.1:" + std::to_string(second_port);
  deviced_process a, b;
  ASSERT_NO_THROW(a = start_with_driver(first_port, second, directory));
  ASSERT_NO_THROW(b = start_with_driver(second_port, first, directory));
  clients helpers;
  for (const auto* server : {&a, &b}) {
    SCOPED_TRACE(server->endpoint());
    std::string output;
    ASSERT_EQ(helpers.run(server->endpoint(), {"platform-names"}, &output), 0) << output;
    EXPECT_EQ(sorted(lines_of(output)), names);
    ASSERT_EQ(helpers.run(server->endpoint(), {"check-loop", "2"}, &output), 0) << output;
  }
}

// A client_helper whose stderr, where the driver logs, comes on its stdout with its own lines.
std::unique_ptr<child_process> start_logged(clients& helpers, const std::string& hosts,
                                            const std::vector<std::string>& args,
                                            const std::vector<std::string>& extra) {
  std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", TROUPE_CLIENT_HELPER};
  argv.insert(argv.end(), args.begin(), args.end());
  auto variables = helpers.environment(hosts);
  variables.insert(variables.end(), extra.begin(), extra.end());
  return std::make_unique<child_process>(argv, variables);
}

TEST(remote_liveness, a_paused_server_fails_blocked_calls_after_the_heartbeat_timeout) {
  auto deviced = start_deviced();
  clients helpers;
  auto runner = start_logged(helpers, deviced.endpoint(), {"run-until-error"},
                             {"TROUPE_ICD_HEARTBEAT_TIMEOUT=2"});
  ASSERT_TRUE(runner->wait_for_line("ready", 120s)) << runner->output();
  // Paused, the server's sockets stay open and its kernel still acknowledges every byte: only
  // silence tells. The deadline is generous; the driver's own timeout is 2 s.
  deviced.process->kill(SIGSTOP);
  auto error = runner->wait_for_line("error", 60s);
  deviced.process->kill(SIGCONT);
  ASSERT_TRUE(error) << "no call failed within 60 s of pausing the server: " << runner->output();
  const int code = std::stoi(error->substr(6));
  EXPECT_TRUE(code == CL_DEVICE_NOT_AVAILABLE || code == CL_OUT_OF_RESOURCES)
      << *error << " (" << cl_error_name(code) << ")";
  auto exit_code = runner->wait(20s);
  ASSERT_TRUE(exit_code) << "the client hangs after the server paused: " << runner->output();
  while (runner->read_line(10s)) {
  }
  EXPECT_EQ(*exit_code, 0) << runner->output();
  EXPECT_NE(runner->output().find("no answer to a heartbeat within 2000 ms"), std::string::npos)
      << "the driver's log does not say why: " << runner->output();
}

TEST(remote_liveness, a_kernel_longer_than_the_heartbeat_timeout_completes) {
  auto deviced = start_deviced();
  clients helpers;
  // The server answers heartbeats while one of the client's connections waits in clFinish.
  auto runner = start_logged(helpers, deviced.endpoint(), {"long-kernel", "3"},
                             {"TROUPE_ICD_HEARTBEAT_TIMEOUT=1"});
  auto ok = runner->wait_for_line("ok", 300s);
  ASSERT_TRUE(ok) << runner->output();
  EXPECT_GE(std::stod(ok->substr(3)), 1.0)
      << "the kernel did not outlast the heartbeat timeout: nothing was checked";
  auto exit_code = runner->wait(60s);
  ASSERT_TRUE(exit_code) << runner->output();
  while (runner->read_line(10s)) {
  }
  EXPECT_EQ(*exit_code, 0) << runner->output();
  EXPECT_EQ(runner->output().find("lost the server"), std::string::npos) << runner->output();
}

}  // namespace
}  // namespace troupe::remote_test
