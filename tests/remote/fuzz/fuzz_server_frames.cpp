// The remote server's decoder under libFuzzer (docs/remote-protocol.md, "Fuzzing").
//
// Every input goes to one real device_server (loopback, any free port), started on first use,
// serving this host's OpenCL platforms (PoCL in CI), so that well-formed requests really run.
// The first byte picks the mode:
//   bit 0 clear: a session is opened properly (hello on one connection, attach on a second),
//                and the rest of the input is written raw to the request connection: frames,
//                headers and payloads, possibly malformed;
//   bit 0 set:   the rest of the input is the very first bytes of a fresh connection, so the
//                handshake itself is fuzzed.
// An input is over only when the server has finished with it: its connections are closed, its
// session and every object of it are freed, and no server thread still works on its behalf.
// Checks (a failure aborts, which libFuzzer reports as a crash, with the input):
//   - every reply is a well-formed reply frame answering the next reply-flagged request frame of
//     the input, in order (replies may stop early: a malformed frame closes the connection),
//     except that a read flagged flag_reply_on_completion may be answered at any later point;
//   - the first connection of a session carries nothing but event_callback notifications;
//   - once the client is gone, its session and every connection thread are gone too.
// Inputs that only ask for a lot of work (huge buffers, images or launches) are skipped: they
// test the host's memory and patience, not the decoder.
//
// Settings (environment): TROUPE_FUZZ_REQUEST_MS (1000): how long the server may take to answer
// an input before the harness closes the session under it; TROUPE_FUZZ_CLOSE_MS (30000): how
// long closing may take before it counts as a hang; TROUPE_FUZZ_VERBOSE=1 prints every reply;
// TROUPE_FUZZ_LOG=error|warn|info|debug sets the server's log level (error);
// TROUPE_FUZZ_NO_BUILDS=1 skips inputs that compile, link or load a program binary (a run after
// executions: each build costs PoCL milliseconds), and counts them at exit.
#include <CL/cl.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "input_frames.hpp"
#include "remote/protocol/opcode.hpp"
#include "remote/protocol/wire.hpp"
#include "troupe/remote/device_server.hpp"

using namespace troupe::remote;
using troupe::remote::fuzz::compiles;
using troupe::remote::fuzz::request_frame;
using troupe::remote::fuzz::split_frames;
using troupe::remote::fuzz::too_expensive;
using clock_type = std::chrono::steady_clock;

#ifdef TROUPE_LIBFUZZER
// Under the fuzzer: an allocation the host cannot give returns null (the OpenCL call fails)
// instead of counting as a crash, and PoCL's own allocations at exit are not reported.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=0";
}
#endif

namespace {

// Copies of the input being run and of the one before, for fail() and for an abort: it may come
// from a platform thread after libFuzzer freed the input, and on behalf of the input before (a
// session still closing). Fixed arrays: the handler reads them, so they are never reallocated.
// An input past 1 MiB is kept cut short (the runs in README.md take -max_len=8192).
struct kept_input {
  static constexpr std::size_t capacity = 1 << 20;
  std::uint8_t bytes[capacity];
  std::size_t size = 0;
};
kept_input kept_inputs[2];
// Which of the two is the latest: published once its copy is whole, for the handler.
std::atomic<std::size_t> kept_latest{0};
static_assert(std::atomic<std::size_t>::is_always_lock_free);

void keep_input(std::span<const std::uint8_t> input) {
  const std::size_t next = kept_latest.load(std::memory_order_relaxed) ^ 1;
  kept_input& into = kept_inputs[next];
  into.size = std::min(input.size(), kept_input::capacity);
  std::memcpy(into.bytes, input.data(), into.size);
  kept_latest.store(next, std::memory_order_release);
}

// Saves the input that failed, as libFuzzer would: PoCL's LLVM puts its own signal handlers in
// front of libFuzzer's, so after abort() libFuzzer may never get to write it.
void save_failed_input() {
  char name[64];
  std::snprintf(name, sizeof name, "failed-input-%d", static_cast<int>(::getpid()));
  if (std::FILE* file = std::fopen(name, "wb")) {
    const kept_input& input = kept_inputs[kept_latest.load(std::memory_order_relaxed)];
    std::fwrite(input.bytes, 1, input.size, file);
    std::fclose(file);
    std::fprintf(stderr, "fuzz_server_frames: the input is saved as %s\n", name);
  }
}

// An abort elsewhere (PoCL aborts on an error of its own) saves the input too, under a name
// made beforehand: only open(2) and write(2) in the handler.
char aborted_input_name[2][64];
void save_input_on_abort(int) {
  const std::size_t latest = kept_latest.load(std::memory_order_acquire);
  for (std::size_t age = 0; age < 2; ++age) {
    const kept_input& input = kept_inputs[latest ^ age];
    int file = ::open(aborted_input_name[age], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file >= 0) {
      [[maybe_unused]] auto written = ::write(file, input.bytes, input.size);
      ::close(file);
    }
  }
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_server_frames: FAILED: %s\n", what.c_str());
  save_failed_input();
  std::fflush(stderr);
  std::abort();
}

int setting(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

struct settings {
  int request_ms = setting("TROUPE_FUZZ_REQUEST_MS", 1000);
  int close_ms = setting("TROUPE_FUZZ_CLOSE_MS", 30000);
  bool verbose = setting("TROUPE_FUZZ_VERBOSE", 0) != 0;
  bool no_builds = setting("TROUPE_FUZZ_NO_BUILDS", 0) != 0;
};
const settings& config() {
  static const settings values;
  return values;
}

// The server every input goes to, made on first use. libFuzzer never ends the process normally,
// so there it lives until the process ends; fuzz_replay stops it at the end of its run.
server::device_server* running_server = nullptr;

server::device_server& the_server() {
  if (running_server == nullptr) {
    server::server_options options;
    options.address = "127.0.0.1";
    options.port = 0;
    const char* level = std::getenv("TROUPE_FUZZ_LOG");
    options.level = level != nullptr ? server::parse_log_level(level) : server::log_level::error;
    running_server = new server::device_server(options);
    running_server->start();
    // After the platforms are up: their handlers, put in front of libFuzzer's, would swallow it.
    std::snprintf(aborted_input_name[0], sizeof aborted_input_name[0], "aborted-input-%d",
                  static_cast<int>(::getpid()));
    std::snprintf(aborted_input_name[1], sizeof aborted_input_name[1], "aborted-input-%d-before",
                  static_cast<int>(::getpid()));
    std::signal(SIGABRT, save_input_on_abort);
  }
  return *running_server;
}

// ---- What the server sends back ------------------------------------------------------------

// Splits a byte stream into frames; calls `on_frame` with each header and the first bytes of
// its payload (enough for a reply's status, deferred status and message).
class frame_stream {
 public:
  using handler = std::function<void(const frame_header&, std::span<const std::byte>)>;
  explicit frame_stream(handler on_frame) : on_frame_(std::move(on_frame)) {}

  void feed(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      if (!in_payload_) {
        std::size_t take = std::min(bytes.size(), sizeof(frame_header) - header_have_);
        std::memcpy(header_bytes_.data() + header_have_, bytes.data(), take);
        header_have_ += take;
        bytes = bytes.subspan(take);
        if (header_have_ < sizeof(frame_header)) return;
        std::memcpy(&header_, header_bytes_.data(), sizeof header_);
        if (header_.payload_size > max_frame_payload) {
          fail("the server sent a frame of " + std::to_string(header_.payload_size) +
               " payload bytes, over the protocol's limit");
        }
        in_payload_ = true;
        left_ = header_.payload_size;
        prefix_.clear();
      }
      std::size_t take = std::min<std::size_t>(bytes.size(), left_);
      std::size_t keep = std::min(take, kept_prefix - std::min(kept_prefix, prefix_.size()));
      prefix_.insert(prefix_.end(), bytes.begin(),
                     bytes.begin() + static_cast<std::ptrdiff_t>(keep));
      left_ -= take;
      bytes = bytes.subspan(take);
      if (left_ == 0) {
        in_payload_ = false;
        header_have_ = 0;
        ++frames_;
        on_frame_(header_, prefix_);
      }
    }
  }
  /// False while a frame has begun but not ended.
  [[nodiscard]] bool between_frames() const { return !in_payload_ && header_have_ == 0; }
  [[nodiscard]] std::size_t frames() const { return frames_; }

 private:
  static constexpr std::size_t kept_prefix = 256;
  handler on_frame_;
  std::array<std::byte, sizeof(frame_header)> header_bytes_{};
  std::size_t header_have_ = 0;
  frame_header header_{};
  bool in_payload_ = false;
  std::uint64_t left_ = 0;
  std::vector<std::byte> prefix_;
  std::size_t frames_ = 0;
};

struct reply_prefix {
  std::int32_t status = 0;
  std::int32_t deferred = 0;
  std::string message;
};

// Status, deferred status and message, which start every reply (checked against the frame).
reply_prefix parse_reply(const frame_header& header, std::span<const std::byte> prefix) {
  if (header.payload_size < 16) {
    fail("reply " + std::to_string(header.opcode) + " of " + std::to_string(header.payload_size) +
         " bytes has no room for its status and message");
  }
  reader in(prefix);
  reply_prefix parsed;
  parsed.status = in.get<std::int32_t>();
  parsed.deferred = in.get<std::int32_t>();
  auto length = in.get<std::uint64_t>();
  if (length > header.payload_size - 16) {
    fail("reply " + std::to_string(header.opcode) + " announces a message of " +
         std::to_string(length) + " bytes in a payload of " + std::to_string(header.payload_size));
  }
  auto shown = std::min<std::size_t>(static_cast<std::size_t>(length), in.remaining());
  parsed.message.assign(reinterpret_cast<const char*>(prefix.data()) + 16, shown);
  return parsed;
}

constexpr std::uint16_t reply_bit = static_cast<std::uint16_t>(opcode::reply);

// ---- The client's side of a connection -----------------------------------------------------

class client_socket {
 public:
  explicit client_socket(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) fail(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
        errno != EINPROGRESS) {
      fail(std::string("connect: ") + std::strerror(errno));
    }
    pollfd waiting{fd_, POLLOUT, 0};
    if (::poll(&waiting, 1, 10000) != 1) fail("connect to the server timed out");
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) fail(std::string("connect: ") + std::strerror(error));
  }
  client_socket(const client_socket&) = delete;
  client_socket& operator=(const client_socket&) = delete;
  ~client_socket() { ::close(fd_); }

  enum class outcome { closed, reset, frames, deadline };

  // Writes `out` (then half-closes, when asked) while reading whatever the server sends into
  // `in`, so that neither side can block the other. Returns once the server closed its side,
  // `stop_after` frames arrived (0: no such limit), or the deadline passed.
  outcome pump(std::span<const std::byte> out, bool half_close, frame_stream& in,
               clock_type::time_point deadline, std::size_t stop_after = 0) {
    std::size_t sent = 0;
    std::array<std::byte, 1 << 16> buffer;
    while (true) {
      if (sent == out.size() && half_close && !write_closed_) {
        ::shutdown(fd_, SHUT_WR);
        write_closed_ = true;
      }
      if (stop_after != 0 && in.frames() >= stop_after) return outcome::frames;
      auto now = clock_type::now();
      if (now >= deadline) return outcome::deadline;
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      pollfd ready{fd_, static_cast<short>(POLLIN | (sent < out.size() ? POLLOUT : 0)), 0};
      int count = ::poll(&ready, 1, static_cast<int>(std::min<std::int64_t>(wait, 1000)));
      if (count < 0 && errno != EINTR) fail(std::string("poll: ") + std::strerror(errno));
      if (count <= 0) continue;
      if (sent < out.size() && (ready.revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
        ssize_t wrote = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
        if (wrote > 0) {
          sent += static_cast<std::size_t>(wrote);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          sent = out.size();  // the server closed the connection: the rest cannot go
        }
      }
      if ((ready.revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
        ssize_t got = ::recv(fd_, buffer.data(), buffer.size(), 0);
        if (got == 0) return outcome::closed;
        if (got > 0) {
          in.feed(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(got)));
        } else if (errno == ECONNRESET || errno == EPIPE) {
          return outcome::reset;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          fail(std::string("receive: ") + std::strerror(errno));
        }
      }
    }
  }

  void half_close() {
    ::shutdown(fd_, SHUT_WR);
    write_closed_ = true;
  }

 private:
  int fd_ = -1;
  bool write_closed_ = false;
};

std::vector<std::byte> frame(opcode op, std::uint16_t flags, std::uint32_t sequence,
                             const writer& payload) {
  frame_header header{static_cast<std::uint32_t>(payload.size()), static_cast<std::uint16_t>(op),
                      flags, sequence, 0};
  // Sized once and filled by memcpy: GCC 12 warns falsely about insert (as in wire.hpp).
  std::vector<std::byte> bytes(sizeof header + payload.head().size());
  std::memcpy(bytes.data(), &header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, payload.head().data(), payload.head().size());
  return bytes;
}

clock_type::time_point after_ms(int ms) {
  return clock_type::now() + std::chrono::milliseconds(ms);
}

// Waits until the server holds no session and serves no connection: everything of this input
// is gone, and no thread of the server still works on its behalf.
void wait_until_idle(const server::device_server& server) {
  auto deadline = after_ms(config().close_ms);
  while (server.session_count() != 0 || server.connection_count() != 0) {
    if (clock_type::now() >= deadline) {
      fail("hang: " + std::to_string(server.session_count()) + " sessions and " +
           std::to_string(server.connection_count()) + " connections are still open " +
           std::to_string(config().close_ms) + " ms after their client left");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// The input is the first bytes of a fresh connection.
void fuzz_handshake(server::device_server& server, std::span<const std::byte> bytes) {
  client_socket socket(server.port());
  bool welcomed = false;
  int answers = 0;
  frame_stream in([&](const frame_header& header, std::span<const std::byte> prefix) {
    // One answer at most: a hello's welcome or an attach's, or a refusal before the server
    // closes. After a welcome the connection is a session's notification connection, where
    // the server answers heartbeats (pings) and sends nothing else without requests.
    auto op = static_cast<std::uint16_t>(header.opcode & ~reply_bit);
    const bool handshake = op == static_cast<std::uint16_t>(opcode::hello) ||
                           op == static_cast<std::uint16_t>(opcode::attach);
    const bool heartbeat = welcomed && op == static_cast<std::uint16_t>(opcode::ping);
    if ((header.opcode & reply_bit) == 0 || (!handshake && !heartbeat)) {
      fail("handshake answered with opcode " + std::to_string(header.opcode));
    }
    auto reply = parse_reply(header, prefix);
    if (handshake) {
      ++answers;
      welcomed = op == static_cast<std::uint16_t>(opcode::hello) && reply.status == 0;
    }
    if (config().verbose) {
      std::fprintf(stderr, "  handshake reply %s: %d %s\n", to_string(static_cast<opcode>(op)),
                   reply.status, reply.message.c_str());
    }
  });
  auto result = socket.pump(bytes, true, in, after_ms(config().close_ms));
  if (result == client_socket::outcome::deadline) {
    fail("hang: the server did not close a handshake connection within " +
         std::to_string(config().close_ms) + " ms");
  }
  if (answers > 1) fail("the server answered a handshake " + std::to_string(answers) + " times");
  if (result == client_socket::outcome::closed && !in.between_frames()) {
    fail("the server closed a handshake connection in the middle of a frame");
  }
}

// ---- A session of the harness's own, with the input on its request connection ---------------

// What hello's welcome gives: the session, and the key that attaches a connection to it (then
// the server's local socket, which the harness does not use).
struct session_keys {
  std::uint64_t id = 0;
  std::array<std::uint64_t, 2> key{};
};

// The session's first connection: hello's welcome (which fills `session`), then nothing but
// notifications.
frame_stream::handler check_notifications(session_keys& session) {
  return [&session](const frame_header& header, std::span<const std::byte> prefix) {
    if (session.id == 0) {
      auto reply = parse_reply(header, prefix);
      if (header.opcode != (static_cast<std::uint16_t>(opcode::hello) | reply_bit) ||
          reply.status != CL_SUCCESS || header.payload_size < 16 + 24 + 8) {
        fail("hello refused: " + reply.message);
      }
      reader in(prefix.subspan(16));
      session.id = in.get<std::uint64_t>();
      session.key = {in.get<std::uint64_t>(), in.get<std::uint64_t>()};
      return;
    }
    if (header.opcode != static_cast<std::uint16_t>(opcode::event_callback) ||
        header.payload_size != 12) {
      fail("the notification connection carried opcode " + std::to_string(header.opcode) +
           " with " + std::to_string(header.payload_size) + " payload bytes");
    }
  };
}

// Opens the session: hello on the first connection, and its welcome.
void say_hello(client_socket& anchor, frame_stream& notifications) {
  writer hello;
  hello.put<std::uint32_t>(protocol_magic).put<std::uint16_t>(protocol_version).put_string("");
  if (anchor.pump(frame(opcode::hello, flag_reply, 0, hello), false, notifications,
                  after_ms(config().close_ms), 1) != client_socket::outcome::frames) {
    fail("no welcome for hello");
  }
}

// The replies on the request connection: attach's welcome, then one answer for each
// reply-flagged frame of the input, in order.
class reply_checker {
 public:
  explicit reply_checker(const std::vector<request_frame>& frames) {
    for (const auto& request : frames) {
      if ((request.header.flags & flag_reply) != 0) awaited_.push_back(&request);
    }
    answered_.assign(awaited_.size(), false);
  }

  void check(const frame_header& header, std::span<const std::byte> prefix) {
    auto reply = parse_reply(header, prefix);
    if (!attached_) {
      if (header.opcode != (static_cast<std::uint16_t>(opcode::attach) | reply_bit) ||
          reply.status != CL_SUCCESS || header.payload_size != 16 + 4) {
        fail("attach refused: " + reply.message);
      }
      attached_ = true;
      return;
    }
    std::size_t due = due_for(header);
    if (due == awaited_.size()) {
      fail("reply " + std::to_string(header.opcode) + " (sequence " +
           std::to_string(header.sequence) + ") answers no reply-flagged request");
    }
    answered_[due] = true;
    const frame_header& asked = awaited_[due]->header;
    if (header.opcode != (asked.opcode | reply_bit) || header.sequence != asked.sequence ||
        header.flags != 0 || header.reserved != 0) {
      fail("reply " + std::to_string(header.opcode) + " (sequence " +
           std::to_string(header.sequence) + ") where request " + std::to_string(asked.opcode) +
           " (sequence " + std::to_string(asked.sequence) + ") was due");
    }
    if (config().verbose) {
      std::fprintf(stderr, "  %s #%u: %d (deferred %d) %s\n",
                   to_string(static_cast<opcode>(asked.opcode)), asked.sequence, reply.status,
                   reply.deferred, reply.message.c_str());
    }
  }

 private:
  // Reads answered once they complete: their replies may come after those of later frames.
  static bool on_completion(const frame_header& asked) {
    auto op = static_cast<opcode>(asked.opcode);
    return (asked.flags & flag_reply_on_completion) != 0 &&
           (op == opcode::read_buffer || op == opcode::read_buffer_rect ||
            op == opcode::read_image);
  }

  // Due: the first unanswered frame answered in order if the reply is its, else an earlier
  // unanswered read answered on completion that the reply names (sequence numbers are the
  // client's: two frames may share one); awaited_.size() when none is.
  std::size_t due_for(const frame_header& header) const {
    auto names = [&](const frame_header& candidate) {
      return header.sequence == candidate.sequence &&
             header.opcode == (candidate.opcode | reply_bit);
    };
    std::size_t in_order = 0;
    while (in_order < awaited_.size() &&
           (answered_[in_order] || on_completion(awaited_[in_order]->header))) {
      ++in_order;
    }
    if (in_order < awaited_.size() && names(awaited_[in_order]->header)) return in_order;
    for (std::size_t i = 0; i < in_order; ++i) {
      if (!answered_[i] && names(awaited_[i]->header)) return i;
    }
    return in_order;
  }

  std::vector<const request_frame*> awaited_;  // the input's reply-flagged frames, in order
  std::vector<bool> answered_;
  bool attached_ = false;
};

// Attaches the request connection to the session, and waits for its welcome.
void attach_requests(client_socket& requests, frame_stream& replies, const session_keys& session) {
  writer attach;
  attach.put<std::uint32_t>(protocol_magic).put<std::uint16_t>(protocol_version).put_string("");
  attach.put<std::uint64_t>(session.id)
      .put<std::uint64_t>(session.key[0])
      .put<std::uint64_t>(session.key[1]);
  if (requests.pump(frame(opcode::attach, flag_reply, 0, attach), false, replies,
                    after_ms(config().close_ms), 1) != client_socket::outcome::frames) {
    fail("no welcome for attach");
  }
}

// Writes the input, until the server closes the connection (the end of the input, or a frame it
// refuses) or the time is up.
client_socket::outcome send_input(client_socket& requests, frame_stream& replies,
                                  std::span<const std::byte> bytes) {
  auto result = requests.pump(bytes, true, replies, after_ms(config().request_ms));
  if (result == client_socket::outcome::closed && !replies.between_frames()) {
    fail("the server closed a request connection in the middle of a frame");
  }
  if (config().verbose && result == client_socket::outcome::deadline) {
    std::fprintf(stderr, "  (still busy after %d ms: closing the session under it)\n",
                 config().request_ms);
  }
  return result;
}

// The client leaves: closing the first connection closes the session, which closes the request
// connection too if it is still open (`input` tells how sending the input ended).
void leave_session(client_socket& anchor, frame_stream& notifications, client_socket& requests,
                   frame_stream& replies, client_socket::outcome input) {
  anchor.half_close();
  if (anchor.pump({}, true, notifications, after_ms(config().close_ms)) ==
      client_socket::outcome::deadline) {
    fail("hang: the session was not closed within " + std::to_string(config().close_ms) +
         " ms of its client leaving");
  }
  if (input == client_socket::outcome::deadline &&
      requests.pump({}, true, replies, after_ms(config().close_ms)) ==
          client_socket::outcome::deadline) {
    fail("hang: a request connection stayed open " + std::to_string(config().close_ms) +
         " ms after its session closed");
  }
}

// A session opened properly; the input is written raw to its request connection.
void fuzz_requests(server::device_server& server, std::span<const std::byte> bytes,
                   const std::vector<request_frame>& frames) {
  client_socket anchor(server.port());
  session_keys session;
  frame_stream notifications(check_notifications(session));
  say_hello(anchor, notifications);

  client_socket requests(server.port());
  reply_checker checker(frames);
  frame_stream replies([&checker](const frame_header& header, std::span<const std::byte> prefix) {
    checker.check(header, prefix);
  });
  attach_requests(requests, replies, session);
  auto input = send_input(requests, replies, bytes);
  leave_session(anchor, notifications, requests, replies, input);
}

// Inputs run and skipped, printed at exit: executions that skipped their input ran nothing.
struct input_counts {
  std::uint64_t ran = 0;
  std::uint64_t skipped_builds = 0;
  std::uint64_t skipped_expensive = 0;
  ~input_counts() {
    std::fprintf(stderr,
                 "fuzz_server_frames: %llu inputs ran; skipped %llu that asked for a lot of work "
                 "and %llu that build (TROUPE_FUZZ_NO_BUILDS)\n",
                 static_cast<unsigned long long>(ran),
                 static_cast<unsigned long long>(skipped_expensive),
                 static_cast<unsigned long long>(skipped_builds));
  }
};
input_counts counts;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  keep_input({data, size});
  server::device_server& server = the_server();
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    fuzz_handshake(server, bytes);
  } else {
    auto frames = split_frames(bytes);
    // libFuzzer: do not keep these inputs.
    if (too_expensive(frames)) {
      ++counts.skipped_expensive;
      return -1;
    }
    if (config().no_builds && compiles(frames)) {
      ++counts.skipped_builds;
      return -1;
    }
    fuzz_requests(server, bytes, frames);
  }
  ++counts.ran;
  wait_until_idle(server);
  return 0;
}

// Stops the server and joins every thread it started (fuzz_replay's last step): a run that ends
// with server threads never joined would be a leak under ThreadSanitizer.
extern "C" void troupe_fuzz_stop_server() {
  delete running_server;
  running_server = nullptr;
}
