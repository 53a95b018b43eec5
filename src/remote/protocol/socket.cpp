#include "remote/protocol/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "remote/protocol/tls_stream.hpp"

namespace troupe::remote {

namespace {

std::string system_error(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

stream_socket::stream_socket() = default;
stream_socket::stream_socket(int fd) : fd_(fd) {}
stream_socket::stream_socket(stream_socket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      spin_(other.spin_),
      read_ahead_(std::move(other.read_ahead_)),
      read_begin_(std::exchange(other.read_begin_, 0)),
      read_end_(std::exchange(other.read_end_, 0)),
      deadline_(other.deadline_),
      tls_(std::move(other.tls_)) {}
stream_socket& stream_socket::operator=(stream_socket&& other) noexcept {
  if (this != &other) {
    spin_ = other.spin_;
    read_ahead_ = std::move(other.read_ahead_);
    read_begin_ = std::exchange(other.read_begin_, 0);
    read_end_ = std::exchange(other.read_end_, 0);
    deadline_ = other.deadline_;
    tls_ = std::move(other.tls_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}
stream_socket::~stream_socket() {
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
}

void stream_socket::secure(std::unique_ptr<tls_stream> stream) {
  tls_ = std::move(stream);
}

namespace {

// An abstract Unix socket's address: a NUL, then the name (unix(7)).
sockaddr_un local_address(const std::string& name, socklen_t& length) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof address.sun_path) {
    throw std::invalid_argument("a local socket name of " + std::to_string(name.size()) +
                                " bytes; 1 to " + std::to_string(sizeof address.sun_path - 1) +
                                " fit");
  }
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return address;
}

int socket_family(int fd) {
  sockaddr_storage own{};
  socklen_t length = sizeof own;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&own), &length) != 0) return AF_UNSPEC;
  return own.ss_family;
}

}  // namespace

void tune_socket(int fd) {
  if (socket_family(fd) == AF_UNIX) {  // no TCP options; the buffers as below
    int buffer = 4 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    return;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int idle = 10, interval = 5, probes = 3;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  // Bulk transfers: large buffers keep a fast link busy.
  int buffer = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
}

void set_receive_timeout(int fd, int timeout_ms) {
  timeval limit{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

stream_socket stream_socket::connect(const std::string& host, std::uint16_t port, int timeout_ms) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    throw connection_lost("cannot resolve " + where + ": " + ::gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    int fd =
        ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) continue;
    // Non-blocking connect, so that an unreachable host costs timeout_ms, not minutes.
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = ::connect(fd, address->ai_addr, address->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd waiting{fd, POLLOUT, 0};
      rc = ::poll(&waiting, 1, timeout_ms);
      if (rc == 0) {
        errno = ETIMEDOUT;
        rc = -1;
      } else if (rc > 0) {
        int error = 0;
        socklen_t length = sizeof error;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        errno = error;
        rc = error == 0 ? 0 : -1;
      }
    }
    if (rc == 0) {
      ::fcntl(fd, F_SETFL, flags);
      tune_socket(fd);
      ::freeaddrinfo(found);
      return stream_socket(fd);
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  throw connection_lost("cannot connect to " + where + ": " + last_error);
}

stream_socket stream_socket::connect_local(const std::string& name) {
  socklen_t length = 0;
  sockaddr_un address = local_address(name, length);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    std::string error = system_error(("cannot connect to the local socket " + name).c_str());
    if (fd >= 0) ::close(fd);
    throw connection_lost(error);
  }
  tune_socket(fd);
  return stream_socket(fd);
}

void stream_socket::append_frame(std::vector<std::byte>& out, opcode op, std::uint16_t flags,
                                 std::uint32_t sequence, const writer& payload) {
  if (payload.size() > max_frame_payload) {
    throw decode_error("frame payload of " + std::to_string(payload.size()) +
                       " bytes is over the limit of " + std::to_string(max_frame_payload));
  }
  frame_header header{static_cast<std::uint32_t>(payload.size()), static_cast<std::uint16_t>(op),
                      flags, sequence, 0};
  std::size_t at = out.size();
  out.resize(at + sizeof header + payload.size());
  std::memcpy(out.data() + at, &header, sizeof header);
  at += sizeof header;
  if (!payload.head().empty())
    std::memcpy(out.data() + at, payload.head().data(), payload.head().size());
  at += payload.head().size();
  if (payload.tail_size() > 0) std::memcpy(out.data() + at, payload.tail(), payload.tail_size());
}

void stream_socket::send_encoded(std::span<const std::byte> frames) {
  send_parts(nullptr, 0, frames);
}

void stream_socket::send_frame(opcode op, std::uint16_t flags, std::uint32_t sequence,
                               const writer& payload, std::span<const std::byte> before) {
  if (payload.size() > max_frame_payload) {
    throw decode_error("frame payload of " + std::to_string(payload.size()) +
                       " bytes is over the limit of " + std::to_string(max_frame_payload));
  }
  frame_header header{static_cast<std::uint32_t>(payload.size()), static_cast<std::uint16_t>(op),
                      flags, sequence, 0};
  iovec parts[4] = {{const_cast<std::byte*>(before.data()), before.size()},
                    {&header, sizeof header},
                    {const_cast<std::byte*>(payload.head().data()), payload.head().size()},
                    {const_cast<void*>(payload.tail()), payload.tail_size()}};
  send_parts(parts, 4, {});
}

void stream_socket::send_parts(iovec* given, int count, std::span<const std::byte> only) {
  iovec single{const_cast<std::byte*>(only.data()), only.size()};
  iovec* parts = given != nullptr ? given : &single;
  if (given == nullptr) count = 1;
  if (tls_ != nullptr) {
    tls_->send(parts, count);
    return;
  }
  int first = 0;
  while (first < count) {
    msghdr message{};
    message.msg_iov = parts + first;
    message.msg_iovlen = static_cast<std::size_t>(count - first);
    ssize_t sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      throw connection_lost(system_error("send"));
    }
    auto left = static_cast<std::size_t>(sent);
    while (first < count && left >= parts[first].iov_len) {
      left -= parts[first].iov_len;
      ++first;
    }
    if (first < count) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
}

void stream_socket::receive_exact(void* data, std::size_t size) {
  auto* out = static_cast<char*>(data);
  // Bytes already read ahead come first.
  std::size_t buffered = std::min(size, read_end_ - read_begin_);
  if (buffered > 0) {
    std::memcpy(out, read_ahead_.data() + read_begin_, buffered);
    read_begin_ += buffered;
    out += buffered;
    size -= buffered;
  }
  // Polls without sleeping for up to spin_ microseconds before it blocks: a sleeping thread
  // takes tens of microseconds to wake on loopback, more than a short kernel runs.
  std::chrono::steady_clock::time_point spin_until{};
  bool spinning = spin_.count() > 0;
  while (size > 0) {
    // Small reads fill the read-ahead buffer, so that a burst of pipelined frames costs one
    // receive, not two per frame; bulk bytes go straight to their destination.
    const bool ahead = size < read_ahead_size;
    if (ahead && read_ahead_.empty()) read_ahead_.resize(read_ahead_size);
    ssize_t got = 0;
    if (tls_ == nullptr) {
      if (!spinning && deadline_ != std::chrono::steady_clock::time_point{}) {
        wait_before_deadline();
      }
      got = ahead ? ::recv(fd_, read_ahead_.data(), read_ahead_.size(), spinning ? MSG_DONTWAIT : 0)
                  : ::recv(fd_, out, size, spinning ? MSG_DONTWAIT : 0);
    } else {
      // TLS never blocks in the call: it may hold bytes the socket no longer shows.
      got =
          ahead ? tls_->receive(read_ahead_.data(), read_ahead_.size()) : tls_->receive(out, size);
      if (got < 0 && !spinning) {
        wait_for_tls();
        continue;
      }
    }
    if (got == 0) throw connection_lost("the peer closed the connection");
    if (got < 0) {
      if (errno == EINTR) continue;
      if (spinning && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        auto now = std::chrono::steady_clock::now();
        if (spin_until == std::chrono::steady_clock::time_point{}) spin_until = now + spin_;
        if (now >= spin_until) spinning = false;
        continue;
      }
      throw connection_lost(system_error("receive"));
    }
    auto received = static_cast<std::size_t>(got);
    if (ahead) {
      std::size_t used = std::min(received, size);
      std::memcpy(out, read_ahead_.data(), used);
      read_begin_ = used;
      read_end_ = received;
      out += used;
      size -= used;
    } else {
      out += received;
      size -= received;
    }
  }
}

frame_header stream_socket::receive_header(std::uint32_t max_payload) {
  frame_header header;
  receive_exact(&header, sizeof header);
  if (header.payload_size > max_payload) {
    throw decode_error("frame announces " + std::to_string(header.payload_size) +
                       " payload bytes, over the limit of " + std::to_string(max_payload));
  }
  return header;
}

void stream_socket::wait_before_deadline() const {
  while (true) {
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw deadline_passed("the deadline passed before the bytes came");
    pollfd waiting{fd_, POLLIN, 0};
    int ready = ::poll(&waiting, 1, static_cast<int>(std::min<long long>(left.count(), 60000)));
    if (ready > 0) return;  // bytes, an end or an error: recv tells which
    if (ready < 0 && errno != EINTR) throw connection_lost(system_error("poll"));
  }
}

void stream_socket::wait_for_tls() const {
  // The socket's receive timeout (set_receive_timeout) bounds a TLS wait as it bounds a recv.
  timeval configured{};
  socklen_t length = sizeof configured;
  long long limit_ms = -1;
  if (::getsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &configured, &length) == 0 &&
      (configured.tv_sec != 0 || configured.tv_usec != 0)) {
    limit_ms = static_cast<long long>(configured.tv_sec) * 1000 + configured.tv_usec / 1000;
  }
  const bool dated = deadline_ != std::chrono::steady_clock::time_point{};
  while (true) {
    long long wait_ms = limit_ms;
    if (dated) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ -
                                                               std::chrono::steady_clock::now());
      if (left.count() <= 0) throw deadline_passed("the deadline passed before the bytes came");
      wait_ms = wait_ms < 0 ? left.count() : std::min<long long>(wait_ms, left.count());
    }
    pollfd waiting{fd_, tls_->wanted_events(), 0};
    int ready = ::poll(&waiting, 1, static_cast<int>(std::min<long long>(wait_ms, INT_MAX)));
    if (ready > 0) return;
    if (ready < 0 && errno != EINTR) throw connection_lost(system_error("poll"));
    if (ready == 0 && limit_ms >= 0 && wait_ms == limit_ms) {
      throw connection_lost("receive: no bytes within " + std::to_string(limit_ms) + " ms");
    }
  }
}

frame_header stream_socket::receive_frame(std::vector<std::byte>& payload,
                                          std::uint32_t max_payload) {
  frame_header header = receive_header(max_payload);
  const std::size_t size = header.payload_size;
  if (size <= receive_step) {
    payload.resize(size);
    receive_exact(payload.data(), size);
    return header;
  }
  // A large payload: address space for all of it (untouched pages cost no memory, and one
  // allocation keeps the bytes in place, uncopied), memory for what has arrived only. A
  // header alone, from a client that sends nothing more, commits no more than one step.
  if (payload.capacity() < size) {
    payload.clear();
    payload.reserve(size);
  }
  // Bytes the buffer holds already are memory it has: they are filled at once.
  std::size_t at = std::min(payload.size(), size);
  payload.resize(at);
  receive_exact(payload.data(), at);
  while (at < size) {
    const std::size_t step = std::min(receive_step, size - at);
    payload.resize(at + step);
    receive_exact(payload.data() + at, step);
    at += step;
  }
  return header;
}

bool stream_socket::wait_readable(std::chrono::milliseconds timeout) {
  if (read_end_ > read_begin_) return true;  // read ahead already
  if (tls_ != nullptr && tls_->pending()) return true;
  pollfd waiting{fd_, POLLIN, 0};
  int rc = 0;
  do {
    rc = ::poll(&waiting, 1, static_cast<int>(timeout.count()));
  } while (rc < 0 && errno == EINTR);
  return rc != 0;  // an error too: the receive that follows reports it
}

void stream_socket::shutdown() noexcept {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

std::string peer_address(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  char text[INET6_ADDRSTRLEN] = {};
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return "unknown";
  if (peer.ss_family == AF_UNIX) return "local";
  const void* address =
      peer.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&peer)->sin_addr);
  if (::inet_ntop(peer.ss_family, address, text, sizeof text) == nullptr) return "unknown";
  return text;
}

bool peer_is_loopback(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return false;
  if (peer.ss_family == AF_UNIX) return true;
  if (peer.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<sockaddr_in*>(&peer)->sin_addr.s_addr) >> 24) == 127;
  }
  return peer.ss_family == AF_INET6 &&
         IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr);
}

listen_socket::listen_socket(const local_name& local) : loopback_(true) {
  socklen_t length = 0;
  sockaddr_un address = local_address(local.name, length);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(fd, 64) != 0) {
    std::string error = system_error(("cannot listen on the local socket " + local.name).c_str());
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(error);
  }
  fd_ = fd;
}

listen_socket::listen_socket(const std::string& address, std::uint16_t port) {
  const std::string where = address + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    throw std::runtime_error("cannot listen on " + where + ": the address is not numeric (" +
                             ::gai_strerror(rc) + ")");
  }
  fd_ = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd_ < 0 || ::bind(fd_, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd_, 64) != 0) {
    std::string error = system_error(("cannot listen on " + where).c_str());
    ::freeaddrinfo(found);
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error(error);
  }
  if (found->ai_family == AF_INET) {
    auto* ipv4 = reinterpret_cast<sockaddr_in*>(found->ai_addr);
    loopback_ = (ntohl(ipv4->sin_addr.s_addr) >> 24) == 127;
  } else if (found->ai_family == AF_INET6) {
    auto* ipv6 = reinterpret_cast<sockaddr_in6*>(found->ai_addr);
    loopback_ = IN6_IS_ADDR_LOOPBACK(&ipv6->sin6_addr);
  }
  ::freeaddrinfo(found);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                           : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
}

listen_socket::~listen_socket() {
  close();
}

stream_socket listen_socket::accept() {
  while (true) {
    int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      tune_socket(fd);
      return stream_socket(fd);
    }
    const int error = errno;
    if (fd_ < 0) return stream_socket();  // closed (EBADF, EINVAL after the shutdown)
    switch (error) {
      // This connection only: Linux hands its pending network errors to accept (accept(2)).
      case EINTR:
      case ECONNABORTED:
      case EPROTO:
      case EPERM:
      case ENETDOWN:
      case ENETUNREACH:
      case ENOPROTOOPT:
      case EHOSTDOWN:
      case EHOSTUNREACH:
      case ENONET:
      case EOPNOTSUPP:
      case ETIMEDOUT:
        continue;
      default:  // EMFILE, ENFILE, ENOBUFS, ENOMEM...: the system's, until something is freed
        throw std::system_error(error, std::generic_category(), "accept");
    }
  }
}

void listen_socket::close() noexcept {
  int fd = fd_.exchange(-1);
  if (fd >= 0) {
    ::shutdown(fd, SHUT_RDWR);  // wakes a thread blocked in accept()
    ::close(fd);
  }
}

}  // namespace troupe::remote
