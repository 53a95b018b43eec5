// The server behind device_server's interface (include/troupe/remote/device_server.hpp): one
// thread accepts, one serves each connection.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "remote/protocol/socket.hpp"
#include "remote/server/log_throttle.hpp"
#include "remote/server/session.hpp"
#include "troupe/remote/device_server.hpp"

namespace troupe::remote::server {

/// The server behind device_server's interface.
class device_server::state {
 public:
  explicit state(server_options options);
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state();

  void start();
  void run();
  void stop();

  [[nodiscard]] std::uint16_t port() const { return listener_.port(); }
  [[nodiscard]] std::size_t session_count() const;
  [[nodiscard]] std::size_t object_count() const;
  [[nodiscard]] std::size_t connection_count() const;

 private:
  struct session_entry {
    std::shared_ptr<session> opened;
    std::vector<stream_socket*> connections;
  };

  void admit(stream_socket socket);
  void serve(stream_socket& socket);
  void open_session(stream_socket& socket, const frame_header& header);
  void join_session(stream_socket& socket, const frame_header& header, reader& in);
  void serve_anchor(stream_socket& socket, std::shared_ptr<session> opened);
  void serve_requests(stream_socket& socket, std::shared_ptr<session> joined, std::uint32_t index);
  void close_session(std::uint64_t id);
  void log(log_level level, const std::string& message) const;
  // Logs through `throttle`: one line a second at most, saying how many were held back.
  void log(log_throttle& throttle, log_level level, const std::string& message) const;

  server_options options_;
  listen_socket listener_;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  mutable log_throttle accept_failures_, refusals_;
  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable stopped_;
  std::map<std::uint64_t, session_entry> sessions_;
  std::uint64_t next_session_ = 1;
  std::vector<stream_socket*> open_sockets_;
  struct worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<worker> workers_;  // finished ones are joined at the next accept
};

}  // namespace troupe::remote::server
