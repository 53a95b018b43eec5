// troupe-deviced's engine: serves the OpenCL platforms of this host to remote clients.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "remote/protocol/socket.hpp"
#include "remote/server/session.hpp"

namespace troupe::remote::server {

enum class log_level { error = 0, warn = 1, info = 2, debug = 3 };

/// How a device server listens and whom it lets in.
struct server_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = default_port;  ///< 0: any free port (see device_server::port())
  std::string token;                  ///< required from clients when not empty
  unsigned max_clients = 64;          ///< sessions served at once
  /// How long a connection's thread polls for the next frame before it sleeps: a client's
  /// commands often follow each other within microseconds, and waking costs tens of them.
  unsigned spin_us = 100;
  log_level level = log_level::warn;
};

/// A running server: accepts connections on its own thread, one thread per connection.
class device_server {
 public:
  /// Binds the socket; refuses a non-loopback address without a token.
  explicit device_server(server_options options);
  device_server(const device_server&) = delete;
  device_server& operator=(const device_server&) = delete;
  /// Stops accepting, closes every connection and frees every session's objects.
  ~device_server();

  /// Starts accepting in the background.
  void start();
  /// Accepts until stop() is called (from another thread or a signal handler's thread).
  void run();
  void stop();

  [[nodiscard]] std::uint16_t port() const { return listener_.port(); }
  [[nodiscard]] std::size_t session_count() const;
  /// OpenCL objects held for clients, over all sessions (tests check that this drops to 0).
  [[nodiscard]] std::size_t object_count() const;
  /// Connections whose thread is still serving them (the fuzzer checks that this drops to 0
  /// once its client is gone: no thread is left blocked on behalf of a closed session).
  [[nodiscard]] std::size_t connection_count() const;

 private:
  struct session_entry {
    std::shared_ptr<session> state;
    std::vector<stream_socket*> connections;
  };

  void serve(stream_socket socket);
  void serve_anchor(stream_socket& socket, std::shared_ptr<session> opened);
  void serve_requests(stream_socket& socket, std::shared_ptr<session> joined, std::uint32_t index);
  void close_session(std::uint64_t id);
  void log(log_level level, const std::string& message) const;

  server_options options_;
  listen_socket listener_;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards everything below
  std::map<std::uint64_t, session_entry> sessions_;
  std::uint64_t next_session_ = 1;
  std::vector<stream_socket*> open_sockets_;
  struct worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<worker> workers_;  // finished ones are joined at the next accept
};

/// Parses "error", "warn", "info" or "debug"; throws std::invalid_argument otherwise.
log_level parse_log_level(const std::string& name);

}  // namespace troupe::remote::server
