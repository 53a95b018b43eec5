// A server on a loopback address tells its clients a local socket, through which the clients
// of this host attach their request connections (their round trips take half as long as
// through TCP); TROUPE_ICD_LOCAL_SOCKET=0 and --no-local-socket keep them on TCP.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "clients.hpp"
#include "deviced_process.hpp"

namespace troupe::remote_test {
namespace {

// How the server's log says each request connection came: "local" or "127.0.0.1" (it logs
// attaches at debug level).
std::vector<std::string> attached_from(const std::string& log) {
  std::vector<std::string> peers;
  const std::string marker = " attached from ";
  for (auto at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1)) {
    const auto start = at + marker.size();
    peers.push_back(log.substr(start, log.find('\n', start) - start));
  }
  return peers;
}

// Runs a client of three checked rounds against `server` and gives how its request
// connections came.
std::vector<std::string> client_connections(deviced_process& server,
                                            const std::vector<std::string>& environment = {}) {
  clients helpers;
  std::string output;
  EXPECT_EQ(helpers.run(server.endpoint(), {"check-loop", "3"}, &output, 120s, environment), 0)
      << output;
  server.process->kill(SIGTERM);
  while (server.process->read_line(30s)) {
  }
  EXPECT_TRUE(server.process->wait(30s));
  return attached_from(server.process->output());
}

TEST(remote_local_socket, clients_on_this_host_attach_through_it) {
  auto server = start_deviced_logged({"--log-level", "debug"});
  auto peers = client_connections(server);
  ASSERT_FALSE(peers.empty()) << server.process->output();
  for (const auto& peer : peers) EXPECT_EQ(peer, "local");
}

TEST(remote_local_socket, a_client_told_not_to_uses_tcp) {
  auto server = start_deviced_logged({"--log-level", "debug"});
  auto peers = client_connections(server, {"TROUPE_ICD_LOCAL_SOCKET=0"});
  ASSERT_FALSE(peers.empty()) << server.process->output();
  for (const auto& peer : peers) EXPECT_EQ(peer, "127.0.0.1");
}

TEST(remote_local_socket, a_server_told_not_to_serves_tcp_only) {
  auto server = start_deviced_logged({"--log-level", "debug", "--no-local-socket"});
  auto peers = client_connections(server);
  ASSERT_FALSE(peers.empty()) << server.process->output();
  for (const auto& peer : peers) EXPECT_EQ(peer, "127.0.0.1");
}

}  // namespace
}  // namespace troupe::remote_test
