// Blocking TCP streams for the remote protocol: whole frames in, whole frames out.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "remote/protocol/opcode.hpp"
#include "remote/protocol/wire.hpp"

namespace troupe::remote {

class tls_stream;

/// The peer closed the connection, or the network failed under it.
class connection_lost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A receive waited past the socket's deadline (stream_socket::set_deadline).
class deadline_passed : public connection_lost {
 public:
  using connection_lost::connection_lost;
};

/// One connected TCP socket, plain or, once secured, TLS. Not thread-safe: each user serializes
/// its sends, and its receives (one thread may send while another receives).
class stream_socket {
 public:
  stream_socket();
  explicit stream_socket(int fd);
  stream_socket(stream_socket&& other) noexcept;
  stream_socket& operator=(stream_socket&& other) noexcept;
  stream_socket(const stream_socket&) = delete;
  stream_socket& operator=(const stream_socket&) = delete;
  ~stream_socket();

  /// Connects to host:port within `timeout_ms`; throws connection_lost naming the address.
  static stream_socket connect(const std::string& host, std::uint16_t port, int timeout_ms);
  /// Connects to the local (abstract Unix) socket `name` of a server on this host; throws
  /// connection_lost naming it.
  static stream_socket connect_local(const std::string& name);

  /// Sends one frame: header, the writer's buffer, then its tail straight from memory. Bytes of
  /// frames encoded earlier (`before`, see append_frame) go first, in the same system call.
  void send_frame(opcode op, std::uint16_t flags, std::uint32_t sequence, const writer& payload,
                  std::span<const std::byte> before = {});
  /// Sends frames encoded by append_frame.
  void send_encoded(std::span<const std::byte> frames);
  /// Encodes one frame at the end of `out`, to be sent later.
  static void append_frame(std::vector<std::byte>& out, opcode op, std::uint16_t flags,
                           std::uint32_t sequence, const writer& payload);
  /// Receives a header; throws decode_error if its payload is over `max_payload`.
  frame_header receive_header(std::uint32_t max_payload);
  /// Receives exactly `size` bytes.
  void receive_exact(void* data, std::size_t size);
  /// Receives a whole frame into `payload` (resized). A large payload's memory is filled as its
  /// bytes arrive, `receive_step` at a time: a header alone commits none of what it announces.
  frame_header receive_frame(std::vector<std::byte>& payload, std::uint32_t max_payload);

  /// Receives that still wait for bytes at `deadline` throw deadline_passed (a default-made
  /// time point: no deadline, the default). One deadline covers every receive until changed.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }
  /// The deadline set_deadline set.
  [[nodiscard]] std::chrono::steady_clock::time_point deadline() const { return deadline_; }

  /// From now on every byte goes through `stream`, whose handshake is over.
  void secure(std::unique_ptr<tls_stream> stream);
  /// True once secure() was called.
  [[nodiscard]] bool secured() const { return tls_ != nullptr; }

  /// How long a receive polls before it sleeps (0, the default: it sleeps at once).
  void set_spin(std::chrono::microseconds spin) { spin_ = spin; }

  /// Waits up to `timeout` for something to receive: bytes, or the connection's end (which
  /// the next receive reports). False when nothing came.
  bool wait_readable(std::chrono::milliseconds timeout);

  /// Stops both directions; a thread blocked in receive on this socket returns.
  void shutdown() noexcept;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }

 private:
  // Writes every part, however many calls it takes; `given` null: the one span `only`.
  void send_parts(::iovec* given, int count, std::span<const std::byte> only);
  // Waits until the socket has bytes or the deadline passes (then throws deadline_passed).
  void wait_before_deadline() const;
  // Waits until TLS can go on receiving, within the deadline and the receive timeout.
  void wait_for_tls() const;

  static constexpr std::size_t read_ahead_size = 64 * 1024;
  /// Payloads over this are received this many bytes at a time (receive_frame).
  static constexpr std::size_t receive_step = 1 << 20;
  int fd_ = -1;
  std::chrono::microseconds spin_{0};
  std::vector<std::byte> read_ahead_;  // bytes received but not yet asked for
  std::size_t read_begin_ = 0;
  std::size_t read_end_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  std::unique_ptr<tls_stream> tls_;  // null: plain TCP
};

/// Sets TCP_NODELAY and keepalive probes, so that a silent peer is noticed in seconds.
void tune_socket(int fd);

/// Makes receives on `fd` fail after `timeout_ms` without data (0: wait forever). Used around
/// handshakes, so that a port held by something else cannot hang a client.
void set_receive_timeout(int fd, int timeout_ms);

/// The numeric address of the peer of a connected socket ("192.0.2.7", "::1"), "local" for a
/// local socket's, or "unknown".
std::string peer_address(int fd);

/// True when a connected socket's peer is this host: a loopback address or a local socket.
bool peer_is_loopback(int fd);

/// A listening socket on address:port (port 0: any free port), or on a local socket.
class listen_socket {
 public:
  listen_socket(const std::string& address, std::uint16_t port);
  /// The name of an abstract Unix socket (Linux: no file; it goes with the process).
  struct local_name {
    std::string name;
  };
  /// Listens on a local socket: a round trip through it takes half as long as through TCP on
  /// loopback.
  explicit listen_socket(const local_name& local);
  listen_socket(const listen_socket&) = delete;
  listen_socket& operator=(const listen_socket&) = delete;
  ~listen_socket();

  /// Waits for the next connection; returns an invalid socket once close() was called. Throws
  /// std::system_error when the system cannot take one now (out of file descriptors or
  /// memory): the connection waits in the backlog, and the caller decides when to try again.
  /// Errors of a single connection (it was aborted, its network is down) are skipped.
  stream_socket accept();
  void close() noexcept;
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// True when the address is a loopback address (127.0.0.0/8 or ::1).
  [[nodiscard]] bool loopback() const { return loopback_; }

 private:
  std::atomic<int> fd_{-1};  // close() runs on another thread than a blocked accept()
  std::uint16_t port_ = 0;
  bool loopback_ = false;
};

}  // namespace troupe::remote
