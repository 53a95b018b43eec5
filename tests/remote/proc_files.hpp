#pragma once

// What Linux's /proc says about a process and its sockets: the independent reference the
// front-door tests measure the server against.
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace troupe::remote_test {

/// Bytes of memory resident for process `pid` (0: this one), from /proc/PID/statm.
inline std::uint64_t resident_bytes(pid_t pid = 0) {
  std::ifstream statm("/proc/" + (pid == 0 ? std::string("self") : std::to_string(pid)) + "/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

/// The threads of process `pid`, from /proc/PID/status; 0 if it is gone.
inline std::size_t thread_count(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoul(line.substr(8));
  }
  return 0;
}

/// Bytes of address space this process has mapped.
inline std::uint64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  statm >> size;
  return size * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

/// The soft and hard limits on open files of process `pid`, from /proc/PID/limits.
inline std::optional<std::pair<std::string, std::string>> open_file_limits(pid_t pid) {
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  std::string line;
  while (std::getline(limits, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(std::string("Max open files").size()));
    std::pair<std::string, std::string> found;
    fields >> found.first >> found.second;
    return found;
  }
  return std::nullopt;
}

/// Bytes received by the IPv4 socket on `server_port` connected to local port `client_port`
/// that its owner has not read yet (/proc/net/tcp's rx_queue); nothing if no such socket.
inline std::optional<std::uint64_t> unread_on_server(std::uint16_t server_port,
                                                     std::uint16_t client_port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the column names
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    auto port_of = [](const std::string& address) {
      return static_cast<std::uint16_t>(
          std::stoul(address.substr(address.find(':') + 1), nullptr, 16));
    };
    if (local.find(':') == std::string::npos || remote.find(':') == std::string::npos) continue;
    if (port_of(local) != server_port || port_of(remote) != client_port) continue;
    return std::stoull(queues.substr(queues.find(':') + 1), nullptr, 16);
  }
  return std::nullopt;
}

}  // namespace troupe::remote_test
