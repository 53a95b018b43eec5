#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace troupe::remote {

/// The TCP port a device server listens on, and the client driver connects to, unless told
/// otherwise.
inline constexpr std::uint16_t default_port = 7457;

}  // namespace troupe::remote

namespace troupe::remote::server {

/// How much a device server writes to stderr: each level adds to the one before.
enum class log_level { error = 0, warn = 1, info = 2, debug = 3 };

/// Parses "error", "warn", "info" or "debug"; throws std::invalid_argument otherwise.
log_level parse_log_level(const std::string& name);

/// How a device server listens and whom it lets in.
struct server_options {
  /// The numeric address to listen on; one that is not loopback needs a token, and TLS or
  /// `insecure`.
  std::string address = "127.0.0.1";
  /// The TCP port; 0: any free port (see device_server::port()).
  std::uint16_t port = default_port;
  /// Required from clients when not empty.
  std::string token;
  /// PEM file of the server's certificate (and its chain); with `tls_key`, every connection is
  /// TLS. Both or neither.
  std::string tls_certificate;
  /// PEM file of the private key of `tls_certificate`.
  std::string tls_key;
  /// Serves a non-loopback address without TLS: tokens, session keys and data in clear text.
  bool insecure = false;
  /// Sessions served at once.
  unsigned max_clients = 64;
  /// Connections that have not finished their handshake, at most; one more closes the one
  /// that has waited longest (a real client's handshake takes one round trip).
  unsigned max_handshakes = 64;
  /// How long a connection may take for its whole handshake, from its accept.
  std::chrono::milliseconds handshake_timeout{10'000};
  /// How long a session may do nothing (no frame, no request or reply in progress) before it
  /// is closed.
  std::chrono::milliseconds idle_timeout{3'600'000};
  /// Request connections (attach) one session may have open at once.
  unsigned max_session_connections = 256;
  /// On a loopback address, also listen on a local (abstract Unix) socket with a random name,
  /// told to each client in its welcome: clients on this host attach their request
  /// connections there, whose round trips take half as long as through TCP.
  bool local_socket = true;
  /// How long a connection's thread polls for the next frame before it sleeps: a client's
  /// commands often follow each other within microseconds, and waking costs tens of them.
  unsigned spin_us = 100;
  /// What the server logs.
  log_level level = log_level::warn;
  /// Bytes of buffers and images one session may hold on the devices at once; 0: no limit but
  /// the devices' own.
  std::uint64_t session_device_memory = 0;
  /// Bytes the server may hold for one session's transfers at once (reads in flight,
  /// non-blocking writes not yet done); 0: no limit.
  std::uint64_t session_host_memory = std::uint64_t{2} << 30;
  /// Pinned host buffers of 8 MiB each, per context of a session, that reads land in before
  /// they are sent and writes are copied to before the device takes them: NVIDIA copies to
  /// and from pinned memory several times as fast as pageable. Each counts against the
  /// session's host memory for as long as the session keeps it; 0: plain memory.
  unsigned pinned_buffers = 16;
  /// OpenCL objects of every kind together (events included) one session may hold at once;
  /// 0: no limit.
  std::uint64_t session_objects = 100000;
};

}  // namespace troupe::remote::server
