#pragma once

// A connection to a device server that speaks the protocol by hand, frame by frame, so that a
// test can be the careless or hostile client the server must withstand.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "remote/protocol/opcode.hpp"
#include "remote/protocol/wire.hpp"

namespace troupe::remote_test {

using namespace std::chrono_literals;

/// A frame the server sent: its header and its whole payload.
struct raw_frame {
  remote::frame_header header;
  std::vector<std::byte> payload;
};

/// A reply's status, deferred status and message, and a reader at its fields.
struct raw_reply {
  std::int32_t status = 0;
  std::string message;
  std::vector<std::byte> payload;
  std::size_t fields_at = 0;
  [[nodiscard]] remote::reader fields() const {
    return remote::reader(std::span<const std::byte>(payload).subspan(fields_at));
  }
};

/// One TCP connection to 127.0.0.1:port, made from the loopback address `source`.
class raw_connection {
 public:
  raw_connection(std::uint16_t port, const std::string& source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      std::string error = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error("cannot connect from " + source + " to port " +
                               std::to_string(port) + ": " + error);
    }
  }
  raw_connection(raw_connection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }

  [[nodiscard]] int fd() const { return fd_; }
  /// This end's port, which names the connection on the server's side too.
  [[nodiscard]] std::uint16_t local_port() const {
    sockaddr_in self{};
    socklen_t length = sizeof self;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&self), &length);
    return ntohs(self.sin_port);
  }

  /// Sends bytes; false when the server has closed the connection.
  bool send(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) return false;
      bytes = bytes.subspan(static_cast<std::size_t>(sent));
    }
    return true;
  }
  /// Sends one frame; false when the server has closed the connection.
  bool send_frame(remote::opcode op, std::uint16_t flags, std::uint32_t sequence,
                  const remote::writer& payload) {
    return send(encode(op, flags, sequence, payload));
  }
  static std::vector<std::byte> encode(remote::opcode op, std::uint16_t flags,
                                       std::uint32_t sequence, const remote::writer& payload) {
    const auto head = payload.head();
    // A bound the compiler can see, too: GCC 12 warns of a size that wraps around otherwise.
    if (head.size() > remote::max_frame_payload) throw std::length_error("frame over its limit");
    remote::frame_header header{static_cast<std::uint32_t>(payload.size()),
                                static_cast<std::uint16_t>(op), flags, sequence, 0};
    std::vector<std::byte> bytes(sizeof header + head.size());
    std::memcpy(bytes.data(), &header, sizeof header);
    if (!head.empty()) std::memcpy(bytes.data() + sizeof header, head.data(), head.size());
    return bytes;
  }

  /// The next frame, or nothing when the connection was closed or `limit` passed first
  /// (closed_ tells which).
  std::optional<raw_frame> receive(std::chrono::milliseconds limit) {
    std::array<std::byte, sizeof(remote::frame_header)> head{};
    if (!receive_exact(head.data(), head.size(), limit)) return std::nullopt;
    raw_frame frame;
    std::memcpy(&frame.header, head.data(), sizeof frame.header);
    frame.payload.resize(frame.header.payload_size);
    if (!receive_exact(frame.payload.data(), frame.payload.size(), limit)) return std::nullopt;
    return frame;
  }
  /// The next frame as a reply, or nothing (see receive()).
  std::optional<raw_reply> receive_reply(std::chrono::milliseconds limit) {
    auto frame = receive(limit);
    if (!frame) return std::nullopt;
    raw_reply reply;
    remote::reader in(frame->payload);
    reply.status = in.get<std::int32_t>();
    in.get<std::int32_t>();
    reply.message = in.get_string();
    reply.fields_at = frame->payload.size() - in.remaining();
    reply.payload = std::move(frame->payload);
    return reply;
  }
  /// True once the server has closed the connection (an end or a reset), waiting up to
  /// `limit`; bytes that come meanwhile are read and dropped.
  bool closed_within(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!closed_) {
      std::byte ignored[4096];
      auto left = std::max(std::chrono::milliseconds(0),
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               deadline - std::chrono::steady_clock::now()));
      pollfd waiting{fd_, POLLIN, 0};
      if (::poll(&waiting, 1, static_cast<int>(left.count())) > 0) {
        ssize_t got = ::recv(fd_, ignored, sizeof ignored, 0);
        if (got == 0 || (got < 0 && errno != EINTR)) closed_ = true;
      } else if (left.count() == 0) {
        return false;
      }
    }
    return true;
  }
  /// Whether receive() or closed_within() met the end of the connection.
  [[nodiscard]] bool closed() const { return closed_; }

 private:
  bool receive_exact(std::byte* out, std::size_t size, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (size > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd waiting{fd_, POLLIN, 0};
      if (::poll(&waiting, 1, static_cast<int>(left.count())) <= 0) continue;
      ssize_t got = ::recv(fd_, out, size, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        closed_ = true;
        return false;
      }
      out += got;
      size -= static_cast<std::size_t>(got);
    }
    return true;
  }

  int fd_ = -1;
  bool closed_ = false;
};

/// A hello's payload, with `token`.
inline remote::writer hello_payload(const std::string& token) {
  remote::writer payload;
  payload.put<std::uint32_t>(remote::protocol_magic)
      .put<std::uint16_t>(remote::protocol_version)
      .put_string(token);
  return payload;
}

/// An open session: its first connection, its id and key.
struct raw_session {
  raw_connection anchor;
  std::uint64_t id = 0;
  std::array<std::uint64_t, 2> key{};
};

/// Sends a hello and returns the server's answer (nothing if it closed without one).
inline std::optional<raw_reply> say_hello(raw_connection& connection, const std::string& token,
                                          std::chrono::milliseconds limit = 20s) {
  if (!connection.send_frame(remote::opcode::hello, remote::flag_reply, 0, hello_payload(token))) {
    return std::nullopt;
  }
  return connection.receive_reply(limit);
}

/// Opens a session on the server at `port`, from `source`; throws with the server's message if
/// refused.
inline raw_session open_session(std::uint16_t port, const std::string& token = "",
                                const std::string& source = "127.0.0.1") {
  raw_session opened{raw_connection(port, source)};
  auto welcome = say_hello(opened.anchor, token);
  if (!welcome) throw std::runtime_error("the server closed a hello without an answer");
  if (welcome->status != 0) throw std::runtime_error("hello refused: " + welcome->message);
  auto fields = welcome->fields();
  opened.id = fields.get<std::uint64_t>();
  opened.key = {fields.get<std::uint64_t>(), fields.get<std::uint64_t>()};
  return opened;
}

/// Sends an attach to `session` on `connection`; returns the server's answer.
inline std::optional<raw_reply> attach(raw_connection& connection, const raw_session& session,
                                       const std::string& token = "",
                                       std::chrono::milliseconds limit = 20s) {
  remote::writer payload = hello_payload(token);
  payload.put<std::uint64_t>(session.id)
      .put<std::uint64_t>(session.key[0])
      .put<std::uint64_t>(session.key[1]);
  if (!connection.send_frame(remote::opcode::attach, remote::flag_reply, 0, payload)) {
    return std::nullopt;
  }
  return connection.receive_reply(limit);
}

/// Sends a request with flag_reply on `connection` and returns its reply; throws if the server
/// closed the connection or did not answer within `limit`.
inline raw_reply request(raw_connection& connection, remote::opcode op, std::uint32_t sequence,
                         const remote::writer& payload, std::chrono::milliseconds limit = 60s) {
  if (!connection.send_frame(op, remote::flag_reply, sequence, payload)) {
    throw std::runtime_error("the server closed the connection before request " +
                             std::string(remote::to_string(op)));
  }
  auto reply = connection.receive_reply(limit);
  if (!reply) {
    throw std::runtime_error(
        std::string("no reply to ") + remote::to_string(op) +
        (connection.closed() ? ": the server closed the connection" : ": none within the limit"));
  }
  return *reply;
}

/// The ids of the reply's array field.
inline std::vector<std::uint64_t> ids_of(const raw_reply& reply) {
  auto fields = reply.fields();
  return fields.get_array<std::uint64_t>();
}

}  // namespace troupe::remote_test
