#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "troupe/remote/server_options.hpp"

namespace troupe::remote::server {

/// troupe-deviced's engine: serves the OpenCL platforms of this host to remote OpenCL programs
/// that use libtroupe-icd.so (docs/remote-protocol.md). It accepts connections on a thread of
/// its own (start()) or the caller's (run()), and serves each connection on a thread of its own.
class device_server {
 public:
  // -- constructors ---------------------------------------------------------

  /// Binds the socket and lists this host's OpenCL devices, on the caller's thread (an OpenCL
  /// implementation's first listing may set environment variables); refuses a non-loopback
  /// address without a token.
  explicit device_server(server_options options);
  device_server(const device_server&) = delete;
  device_server& operator=(const device_server&) = delete;
  /// Stops accepting, closes every connection and frees every session's objects.
  ~device_server();

  // -- properties -----------------------------------------------------------

  /// The port it listens on (the one it found when the options asked for any).
  [[nodiscard]] std::uint16_t port() const;
  /// Clients it serves now.
  [[nodiscard]] std::size_t session_count() const;
  /// OpenCL objects held for clients, over all sessions (tests check that this drops to 0).
  [[nodiscard]] std::size_t object_count() const;
  /// Connections whose thread is still serving them (the fuzzer checks that this drops to 0
  /// once its client is gone: no thread is left blocked on behalf of a closed session).
  [[nodiscard]] std::size_t connection_count() const;

  // -- operations -----------------------------------------------------------

  /// Starts accepting in the background.
  void start();
  /// Accepts until stop() is called (from another thread or a signal handler's thread).
  void run();
  /// Stops accepting and shuts every open connection down.
  void stop();

 private:
  class state;
  std::unique_ptr<state> state_;
};

}  // namespace troupe::remote::server
