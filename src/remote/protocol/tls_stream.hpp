// One TLS connection over a connected TCP socket: the handshake, then bytes in and out.
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "remote/protocol/tls_context.hpp"

namespace troupe::remote {

struct tls_socket;  // what OpenSSL's I/O for one connection reaches (tls_stream.cpp)

/// A TLS connection on a socket it does not own (stream_socket owns the descriptor). One
/// thread may receive while another sends: each OpenSSL call is made under a lock, and no
/// call waits for the network holding it.
class tls_stream {
 public:
  // -- constructors -------------------------------------------------------------------------

  /// The server side of a handshake on `fd`, over by `deadline`. Throws deadline_passed, or
  /// connection_lost with OpenSSL's reason.
  static std::unique_ptr<tls_stream> accept(int fd, const tls_context& context,
                                            std::chrono::steady_clock::time_point deadline);
  /// The client side of a handshake with `host` on `fd`, over by `deadline`; checks what
  /// `context` asks (chain and host name, pin). Throws connection_lost with the reason.
  static std::unique_ptr<tls_stream> connect(int fd, const tls_context& context,
                                             const std::string& host,
                                             std::chrono::steady_clock::time_point deadline);

  tls_stream(const tls_stream&) = delete;
  tls_stream& operator=(const tls_stream&) = delete;
  ~tls_stream();

  // -- properties ---------------------------------------------------------------------------

  /// True when OpenSSL holds received bytes not yet asked for.
  [[nodiscard]] bool pending() const;
  /// What a receive that returned -1 waits for: POLLIN, or POLLOUT (TLS may need to write).
  [[nodiscard]] short wanted_events() const { return wanted_events_; }

  // -- operations ---------------------------------------------------------------------------

  /// Receives up to `size` bytes without waiting: their count, 0 once the peer closed, or -1
  /// with errno EAGAIN when none are there yet. Throws connection_lost on a TLS failure.
  ssize_t receive(void* data, std::size_t size);
  /// Sends every part, waiting as long as the socket is full. Throws connection_lost.
  void send(const ::iovec* parts, int count);

  /// True when the bytes waiting on `fd` begin a TLS handshake record; waits for the first
  /// three, at most until `deadline` (deadline_passed), or the peer's end (connection_lost).
  static bool starts_with_handshake(int fd, std::chrono::steady_clock::time_point deadline);

 private:
  tls_stream(SSL* connection, int fd);
  void handshake(bool serving, std::chrono::steady_clock::time_point deadline);
  // Sends `size` bytes from `data`, in as many records as it takes.
  void send_bytes(const std::byte* data, std::size_t size);

  SSL* connection_;
  int fd_;
  std::unique_ptr<tls_socket> socket_;  // guarded by mutex_
  mutable std::mutex mutex_;            // every OpenSSL call on connection_
  short wanted_events_ = 0;             // the receiving thread's only
  std::vector<std::byte> staging_;      // the sending thread's: small parts gathered in one record
};

}  // namespace troupe::remote
