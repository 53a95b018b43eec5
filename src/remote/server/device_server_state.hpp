// The server behind device_server's interface (include/troupe/remote/device_server.hpp): one
// thread accepts, one watches for idle sessions, one serves each connection.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "remote/protocol/socket.hpp"
#include "remote/protocol/tls_context.hpp"
#include "remote/server/completion_replies.hpp"
#include "remote/server/log_throttle.hpp"
#include "remote/server/session.hpp"
#include "remote/server/token_failures.hpp"
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
  // Accepts connections from `listener` until the server stops.
  void accept_from(listen_socket& listener);
  void stop();
  void watch();

  [[nodiscard]] std::uint16_t port() const { return listener_.port(); }
  [[nodiscard]] std::size_t session_count() const;
  [[nodiscard]] std::size_t object_count() const;
  [[nodiscard]] std::size_t connection_count() const;

 private:
  void open_local_listener();
  void start_local_acceptor();

  // What a request connection has done, for telling idle sessions apart: frames started and
  // finished (odd while one is served), written by the connection's thread only.
  struct activity {
    std::atomic<std::uint64_t> frames{0};
    completion_replies* replies = nullptr;  // guarded by mutex_
    void step() {
      frames.store(frames.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  };
  struct request_connection {
    stream_socket* socket;
    activity* done;
  };
  struct session_entry {
    std::shared_ptr<session> opened;
    stream_socket* anchor;
    std::vector<request_connection> connections;
    std::uint64_t seen = 0;  // the watchdog's last sum of frames
    std::chrono::steady_clock::time_point active_at = std::chrono::steady_clock::now();
    bool closing = false;
  };
  // A refused handshake: answered (or not) already, logged by `throttle`.
  struct refusal : std::runtime_error {
    refusal(const std::string& why, log_throttle& kind) : std::runtime_error(why), throttle(kind) {}
    log_throttle& throttle;
  };

  void admit(stream_socket socket);
  void serve(stream_socket& socket);
  // The TLS handshake of a connection to a TLS server; answers a plain client's handshake
  // frame with a refusal it can read.
  void secure(stream_socket& socket, const std::string& peer);
  void check_token(stream_socket& socket, opcode op, std::uint32_t sequence,
                   const std::string& token, const std::string& peer);
  void open_session(stream_socket& socket, const frame_header& header);
  void join_session(stream_socket& socket, const frame_header& header, reader& in);
  void serve_anchor(stream_socket& socket, std::shared_ptr<session> opened);
  void serve_requests(stream_socket& socket, std::shared_ptr<session> joined, std::uint32_t index,
                      activity& done);
  void close_session(std::uint64_t id);
  void log(log_level level, const std::string& message) const;
  // Logs through `throttle`: one line a second at most, saying how many were held back.
  void log(log_throttle& throttle, log_level level, const std::string& message) const;

  server_options options_;
  std::shared_ptr<const tls_context> tls_;  // null: plain TCP
  listen_socket listener_;
  std::optional<listen_socket> local_listener_;  // see server_options::local_socket
  std::string local_name_;                       // its name; empty without one
  std::thread acceptor_;
  std::thread local_acceptor_;
  std::thread watchdog_;
  std::atomic<bool> stopping_{false};
  token_failures token_failures_;
  mutable log_throttle accept_failures_, handshakes_closed_, refusals_;
  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable stopped_;
  std::map<std::uint64_t, session_entry> sessions_;
  std::uint64_t next_session_ = 1;
  std::vector<stream_socket*> open_sockets_;
  std::deque<stream_socket*> handshaking_;  // oldest first
  struct worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<worker> workers_;  // finished ones are joined at the next accept
};

}  // namespace troupe::remote::server
