#include "remote/protocol/tls_stream.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "remote/protocol/socket.hpp"

namespace troupe::remote {

// The socket under one connection's BIO. While a message is sent, its records are gathered
// and sent `gather_size` bytes at a time: one system call, and one wake-up of the receiver, per
// 16 records rather than per record, which bulk transfers pay for dearly.
struct tls_socket {
  static constexpr std::size_t gather_size = 256 * 1024;
  int fd = -1;
  bool gathering = false;
  std::vector<char> gathered;
  std::size_t sent = 0;  // of `gathered`

  // Sends what was gathered: 1 when all is sent, 0 when the socket is full, -1 on an error
  // (errno says which).
  int push() {
    while (sent < gathered.size()) {
      ssize_t now =
          ::send(fd, gathered.data() + sent, gathered.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (now < 0 && errno == EINTR) continue;
      if (now < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
      sent += static_cast<std::size_t>(now);
    }
    gathered.clear();
    sent = 0;
    return 1;
  }
};

namespace {

using clock = std::chrono::steady_clock;

tls_socket& socket_of(BIO* bio) {
  return *static_cast<tls_socket*>(BIO_get_data(bio));
}

// OpenSSL's own socket BIO writes with write(), which raises SIGPIPE on a closed connection
// and would end the program that loaded the driver. This one sends with MSG_NOSIGNAL, and
// never waits: a caller that must wait polls without holding its lock.
int socket_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  tls_socket& socket = socket_of(bio);
  const auto length = static_cast<std::size_t>(size);
  if (socket.gathering) {
    if (socket.gathered.size() + length > tls_socket::gather_size) {
      int pushed = socket.push();
      if (pushed == 0) BIO_set_retry_write(bio);
      if (pushed != 1) return -1;
    }
    socket.gathered.insert(socket.gathered.end(), data, data + length);
    return size;
  }
  ssize_t sent = 0;
  do {
    sent = ::send(socket.fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
  return static_cast<int>(sent);
}

int socket_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  ssize_t got = 0;
  do {
    got = ::recv(socket_of(bio).fd, data, static_cast<std::size_t>(size), MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
  return static_cast<int>(got);
}

long socket_control(BIO*, int command, long, void*) {
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int socket_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// One table of functions for every connection, made once (the BIO equivalent of a vtable).
const BIO_METHOD* socket_method() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "troupe socket");
    if (made == nullptr) return static_cast<BIO_METHOD*>(nullptr);
    BIO_meth_set_write(made, socket_write);
    BIO_meth_set_read(made, socket_read);
    BIO_meth_set_ctrl(made, socket_control);
    BIO_meth_set_create(made, socket_create);
    return made;
  }();
  return method;
}

// Waits until `fd` is ready for `events`, or throws deadline_passed at `deadline`.
void wait_until(int fd, short events, clock::time_point deadline, const std::string& what) {
  while (true) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) throw deadline_passed(what + " did not finish before the deadline");
    pollfd waiting{fd, events, 0};
    int ready = ::poll(&waiting, 1, static_cast<int>(std::min<long long>(left.count(), 60000)));
    if (ready > 0) return;
    if (ready < 0 && errno != EINTR) {
      throw connection_lost(std::string("poll: ") + std::strerror(errno));
    }
  }
}

// Why a call failed, from SSL_get_error's `error` and the errno saved after the call.
std::string failure(SSL* connection, int error, int saved_errno) {
  if (error == SSL_ERROR_ZERO_RETURN) return "the peer closed the connection";
  if (error == SSL_ERROR_SYSCALL) {
    std::string reason = openssl_reason("");
    if (!reason.empty()) return reason;
    return saved_errno != 0 ? std::strerror(saved_errno) : "the peer closed the connection";
  }
  std::string reason = openssl_reason("unknown TLS failure");
  long verified = SSL_get_verify_result(connection);
  if (verified != X509_V_OK)
    reason += " (" + std::string(X509_verify_cert_error_string(verified)) + ")";
  return reason;
}

bool numeric_address(const std::string& host) {
  in6_addr address{};
  return ::inet_pton(AF_INET, host.c_str(), &address) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &address) == 1;
}

}  // namespace

tls_stream::tls_stream(SSL* connection, int fd)
    : connection_(connection), fd_(fd), socket_(std::make_unique<tls_socket>()) {
  socket_->fd = fd;
  BIO* bio = BIO_new(socket_method());
  if (bio == nullptr) {
    SSL_free(connection_);
    throw connection_lost("cannot make a TLS connection: " + openssl_reason("out of memory"));
  }
  BIO_set_data(bio, socket_.get());
  SSL_set_bio(connection_, bio, bio);  // the connection owns it now
}

tls_stream::~tls_stream() {
  SSL_free(connection_);
}

std::unique_ptr<tls_stream> tls_stream::accept(int fd, const tls_context& context,
                                               clock::time_point deadline) {
  SSL* connection = SSL_new(context.native());
  if (connection == nullptr) {
    throw connection_lost("cannot make a TLS connection: " + openssl_reason("out of memory"));
  }
  std::unique_ptr<tls_stream> made(new tls_stream(connection, fd));
  made->handshake(true, deadline);
  return made;
}

std::unique_ptr<tls_stream> tls_stream::connect(int fd, const tls_context& context,
                                                const std::string& host,
                                                clock::time_point deadline) {
  SSL* connection = SSL_new(context.native());
  if (connection == nullptr) {
    throw connection_lost("cannot make a TLS connection: " + openssl_reason("out of memory"));
  }
  std::unique_ptr<tls_stream> made(new tls_stream(connection, fd));
  const bool numeric = numeric_address(host);
  if (context.verifies_chain()) {
    // The name or address the hostfile gives must be one the certificate names.
    int named = numeric ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(connection), host.c_str())
                        : SSL_set1_host(connection, host.c_str());
    if (named != 1) throw connection_lost("cannot check the certificate against " + host);
  }
  if (!numeric) SSL_set_tlsext_host_name(connection, host.c_str());
  made->handshake(false, deadline);
  if (context.pin()) {
    X509* certificate = SSL_get1_peer_certificate(connection);
    if (certificate == nullptr) throw connection_lost("the server sent no certificate");
    certificate_digest digest{};
    unsigned length = 0;
    int done = X509_digest(certificate, EVP_sha256(), digest.data(), &length);
    X509_free(certificate);
    if (done != 1 || length != digest.size()) {
      throw connection_lost("cannot hash the server's certificate: " + openssl_reason("unknown"));
    }
    if (digest != *context.pin()) {
      throw connection_lost("the server's certificate is " + to_string(digest) +
                            ", not the pinned " + to_string(*context.pin()));
    }
  }
  return made;
}

void tls_stream::handshake(bool serving, clock::time_point deadline) {
  while (true) {
    ERR_clear_error();
    int result = serving ? SSL_accept(connection_) : SSL_connect(connection_);
    if (result == 1) return;
    const int saved_errno = errno;
    const int error = SSL_get_error(connection_, result);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      wait_until(fd_, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline,
                 "the TLS handshake");
      continue;
    }
    throw connection_lost("TLS handshake failed: " + failure(connection_, error, saved_errno));
  }
}

bool tls_stream::pending() const {
  std::lock_guard lock(mutex_);
  return SSL_has_pending(connection_) == 1;
}

ssize_t tls_stream::receive(void* data, std::size_t size) {
  int error = 0;
  int saved_errno = 0;
  {
    std::lock_guard lock(mutex_);
    ERR_clear_error();
    int got = SSL_read(connection_, data, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
    if (got > 0) return got;
    saved_errno = errno;
    error = SSL_get_error(connection_, got);
  }
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    wanted_events_ = error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
    errno = EAGAIN;
    return -1;
  }
  if (error == SSL_ERROR_ZERO_RETURN) return 0;
  // A peer gone without TLS's goodbye is gone all the same: frames carry their own lengths,
  // so a cut cannot pass for a shorter frame.
  if (error == SSL_ERROR_SSL &&
      ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    ERR_clear_error();
    return 0;
  }
  if (error == SSL_ERROR_SYSCALL && saved_errno == 0 && ERR_peek_error() == 0) return 0;
  throw connection_lost("TLS receive: " + failure(connection_, error, saved_errno));
}

void tls_stream::send(const ::iovec* parts, int count) {
  // Small parts (a header, its fields) go out together as one record; a bulk part tops up
  // that record and then goes straight from its memory.
  constexpr std::size_t record = 16 * 1024;
  staging_.clear();
  {
    std::lock_guard lock(mutex_);
    socket_->gathering = true;
  }
  for (int i = 0; i < count; ++i) {
    const auto* data = static_cast<const std::byte*>(parts[i].iov_base);
    std::size_t size = parts[i].iov_len;
    const std::size_t gathered = std::min(size, record - staging_.size());
    staging_.insert(staging_.end(), data, data + gathered);
    data += gathered;
    size -= gathered;
    if (staging_.size() == record || size > 0) {
      send_bytes(staging_.data(), staging_.size());
      staging_.clear();
    }
    if (size > record) {
      send_bytes(data, size);
    } else {
      staging_.insert(staging_.end(), data, data + size);
    }
  }
  if (!staging_.empty()) send_bytes(staging_.data(), staging_.size());
  // What is still gathered goes now: the message is whole when send returns.
  while (true) {
    int pushed = 0;
    {
      std::lock_guard lock(mutex_);
      pushed = socket_->push();
      if (pushed == 1) socket_->gathering = false;
    }
    if (pushed == 1) return;
    if (pushed < 0) throw connection_lost(std::string("TLS send: ") + std::strerror(errno));
    pollfd waiting{fd_, POLLOUT, 0};
    if (::poll(&waiting, 1, -1) < 0 && errno != EINTR) {
      throw connection_lost(std::string("poll: ") + std::strerror(errno));
    }
  }
}

void tls_stream::send_bytes(const std::byte* data, std::size_t size) {
  while (size > 0) {
    int error = 0;
    int saved_errno = 0;
    {
      std::lock_guard lock(mutex_);
      ERR_clear_error();
      int sent =
          SSL_write(connection_, data, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
      if (sent > 0) {
        data += sent;
        size -= static_cast<std::size_t>(sent);
        continue;
      }
      saved_errno = errno;
      error = SSL_get_error(connection_, sent);
    }
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      // The socket is full (or TLS waits for the peer): wait without the lock, as long as a
      // plain send would block.
      pollfd waiting{fd_, static_cast<short>(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
      if (::poll(&waiting, 1, -1) < 0 && errno != EINTR) {
        throw connection_lost(std::string("poll: ") + std::strerror(errno));
      }
      continue;
    }
    throw connection_lost("TLS send: " + failure(connection_, error, saved_errno));
  }
}

bool tls_stream::starts_with_handshake(int fd, clock::time_point deadline) {
  // A TLS record starts 0x16 (handshake), 0x03, 0x01-0x04 (its version). A plain handshake
  // frame starts with its payload size, under 4096: its third byte is 0. Three bytes tell
  // them apart; the socket wakes the poll only once three are there (or at the peer's end).
  int three = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &three, sizeof three);
  struct restore {
    int fd;
    ~restore() {
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
    }
  } restored{fd};
  while (true) {
    wait_until(fd, POLLIN | POLLRDHUP, deadline, "the handshake");
    unsigned char first[3] = {};
    ssize_t got = ::recv(fd, first, sizeof first, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0) throw connection_lost("the peer closed the connection before its first bytes");
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      throw connection_lost(std::string("receive: ") + std::strerror(errno));
    }
    if (first[0] != 0x16) return false;
    if (got == sizeof first) return first[1] == 0x03 && first[2] >= 0x01 && first[2] <= 0x04;
    pollfd ended{fd, POLLRDHUP, 0};
    if (::poll(&ended, 1, 0) > 0) {
      throw connection_lost("the peer closed the connection after " + std::to_string(got) +
                            " bytes");
    }
  }
}

}  // namespace troupe::remote
