#include "troupe/remote/device_server.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "remote/protocol/socket.hpp"
#include "remote/server/call.hpp"
#include "remote/server/completion_replies.hpp"
#include "remote/server/handlers.hpp"
#include "remote/server/session.hpp"

namespace troupe::remote::server {

// The server behind device_server's interface: one thread accepts, one serves each connection.
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

  void serve(stream_socket socket);
  void open_session(stream_socket& socket, const frame_header& header);
  void join_session(stream_socket& socket, const frame_header& header, reader& in);
  void serve_anchor(stream_socket& socket, std::shared_ptr<session> opened);
  void serve_requests(stream_socket& socket, std::shared_ptr<session> joined, std::uint32_t index);
  void close_session(std::uint64_t id);
  void log(log_level level, const std::string& message) const;

  server_options options_;
  listen_socket listener_;
  std::thread acceptor_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards everything below
  std::map<std::uint64_t, session_entry> sessions_;
  std::uint64_t next_session_ = 1;
  std::vector<stream_socket*> open_sockets_;
  struct worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<worker> workers_;  // finished ones are joined at the next accept
};

namespace {

// Compares in time independent of where the strings differ.
bool same_token(const std::string& expected, const std::string& given) {
  unsigned char difference = expected.size() == given.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(
        given[i] ^ expected[i % std::max<std::size_t>(expected.size(), 1)]);
  }
  return difference == 0;
}

// PoCL 3.1 sets up its devices at the first clGetDeviceIDs, and other threads calling in
// meanwhile see no device (CL_DEVICE_NOT_FOUND) or devices without sizes (every buffer refused
// as over a maximum allocation of 0). That setup also calls setenv (HWLOC_PLUGINS_PATH), which
// races with any thread of the process that reads the environment meanwhile. So the server
// lists every device when it is made, on the thread that makes it, before it starts threads of
// its own; a connection never meets a half-made platform.
void initialize_platforms() {
  static std::once_flag once;
  std::call_once(once, [] {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return;
    std::vector<cl_platform_id> platforms(count);
    if (clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS) return;
    for (auto platform : platforms) {
      char suffix[64] = {};
      clGetPlatformInfo(platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix - 1, suffix, nullptr);
      if (std::string(suffix) == "troupe") continue;  // remote: nothing to set up here
      cl_uint devices = 0;
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices);
    }
  });
}

void send_status(stream_socket& socket, opcode op, std::uint32_t sequence, cl_int status,
                 const std::string& message) {
  writer reply;
  reply.put<std::int32_t>(status).put<std::int32_t>(CL_SUCCESS).put_string(message);
  socket.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(op) |
                                        static_cast<std::uint16_t>(opcode::reply)),
                    0, sequence, reply);
}

}  // namespace

// -- device_server: the interface ---------------------------------------------

device_server::device_server(server_options options)
    : state_(std::make_unique<state>(std::move(options))) {}

device_server::~device_server() = default;

std::uint16_t device_server::port() const {
  return state_->port();
}

std::size_t device_server::session_count() const {
  return state_->session_count();
}

std::size_t device_server::object_count() const {
  return state_->object_count();
}

std::size_t device_server::connection_count() const {
  return state_->connection_count();
}

void device_server::start() {
  state_->start();
}

void device_server::run() {
  state_->run();
}

void device_server::stop() {
  state_->stop();
}

// -- device_server::state: accepting ------------------------------------------

device_server::state::state(server_options options)
    : options_(std::move(options)), listener_(options_.address, options_.port) {
  if (!listener_.loopback() && options_.token.empty()) {
    throw std::invalid_argument("listening on " + options_.address +
                                ", which is not a loopback address, needs a token file");
  }
  if (options_.max_clients == 0) throw std::invalid_argument("max clients must be at least 1");
  initialize_platforms();
}

device_server::state::~state() {
  stop();
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<worker> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& finishing : workers) finishing.thread.join();
}

void device_server::state::start() {
  acceptor_ = std::thread([this] { run(); });
}

void device_server::state::run() {
  log(log_level::info, "serving on " + options_.address + ":" + std::to_string(port()));
  while (!stopping_) {
    stream_socket socket = listener_.accept();
    if (!socket.valid()) break;
    std::lock_guard lock(mutex_);
    if (stopping_) break;
    std::erase_if(workers_, [](worker& old) {
      if (!*old.done) return false;
      old.thread.join();
      return true;
    });
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([this, done, s = std::move(socket)]() mutable {
                          serve(std::move(s));
                          *done = true;
                        }),
                        done});
  }
}

void device_server::state::stop() {
  if (stopping_.exchange(true)) return;
  listener_.close();
  std::lock_guard lock(mutex_);
  for (auto* socket : open_sockets_) socket->shutdown();
}

std::size_t device_server::state::session_count() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::size_t device_server::state::object_count() const {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (auto& [id, entry] : sessions_) count += entry.opened->object_count();
  return count;
}

std::size_t device_server::state::connection_count() const {
  std::lock_guard lock(mutex_);
  return open_sockets_.size();
}

void device_server::state::log(log_level level, const std::string& message) const {
  if (level > options_.level) return;
  static constexpr const char* names[] = {"error", "warn", "info", "debug"};
  std::fprintf(stderr, "troupe-deviced: %s: %s\n", names[static_cast<int>(level)], message.c_str());
}

// -- device_server::state: handshakes -----------------------------------------

void device_server::state::serve(stream_socket socket) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    open_sockets_.push_back(&socket);
  }
  try {
    std::vector<std::byte> payload;
    // Nothing is trusted before the handshake: its frame is small, read whole, and must come
    // within 10 s, so that idle connections cannot pile up threads.
    set_receive_timeout(socket.fd(), 10000);
    frame_header header = socket.receive_frame(payload, max_handshake_payload);
    set_receive_timeout(socket.fd(), 0);
    auto op = static_cast<opcode>(header.opcode);
    reader in(payload);
    if (op != opcode::hello && op != opcode::attach) {
      throw decode_error("first frame is opcode " + std::to_string(header.opcode) +
                         ", not a handshake");
    }
    auto magic = in.get<std::uint32_t>();
    auto version = in.get<std::uint16_t>();
    auto token = in.get_string();
    if (magic != protocol_magic) throw decode_error("handshake without the protocol's magic");
    if (version != protocol_version) {
      send_status(socket, op, header.sequence, CL_INVALID_OPERATION,
                  "protocol version " + std::to_string(version) + " is not this server's " +
                      std::to_string(protocol_version));
      throw decode_error("client speaks protocol version " + std::to_string(version));
    }
    if (!same_token(options_.token, token) && !options_.token.empty()) {
      send_status(socket, op, header.sequence, CL_INVALID_OPERATION, "wrong token");
      throw decode_error("wrong token");
    }
    if (op == opcode::hello) {
      in.expect_end();
      open_session(socket, header);
      // This return skips the cleanup at the end: take the socket off the list here, or stop()
      // would later shut down through a pointer to this finished call's local.
      std::lock_guard lock(mutex_);
      std::erase(open_sockets_, &socket);
      return;
    }
    join_session(socket, header, in);
  } catch (const decode_error& error) {
    log(log_level::warn, std::string("closing a connection: ") + error.what());
  } catch (const connection_lost& lost) {
    log(log_level::debug, std::string("connection closed: ") + lost.what());
  } catch (const std::exception& error) {
    log(log_level::error, std::string("closing a connection after: ") + error.what());
  }
  std::lock_guard lock(mutex_);
  std::erase(open_sockets_, &socket);
  for (auto& [id, entry] : sessions_) std::erase(entry.connections, &socket);
}

// A hello: a new session, whose first connection this one is.
void device_server::state::open_session(stream_socket& socket, const frame_header& header) {
  std::shared_ptr<session> opened;
  {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= options_.max_clients) {
      send_status(socket, opcode::hello, header.sequence, CL_OUT_OF_RESOURCES,
                  "the server already serves its maximum of " +
                      std::to_string(options_.max_clients) + " clients");
      throw decode_error("client refused: server full");
    }
    std::random_device random;
    std::array<std::uint64_t, 2> key{};
    for (auto& word : key) word = (std::uint64_t{random()} << 32) ^ random();
    opened = std::make_shared<session>(
        next_session_++, key, &socket, options_,
        [this](const std::string& refusal) { log(log_level::warn, refusal); });
    sessions_[opened->id()] = {opened, {}};
  }
  serve_anchor(socket, opened);
}

// An attach: one more request connection of an open session.
void device_server::state::join_session(stream_socket& socket, const frame_header& header,
                                        reader& in) {
  auto session_id = in.get<std::uint64_t>();
  std::array<std::uint64_t, 2> key{in.get<std::uint64_t>(), in.get<std::uint64_t>()};
  in.expect_end();
  std::shared_ptr<session> joined;
  {
    std::lock_guard lock(mutex_);
    auto found = sessions_.find(session_id);
    if (found != sessions_.end() && found->second.opened->key() == key) {
      joined = found->second.opened;
      found->second.connections.push_back(&socket);
    }
  }
  if (!joined) {
    send_status(socket, opcode::attach, header.sequence, CL_INVALID_OPERATION,
                "no open session " + std::to_string(session_id) + " with that key");
    throw decode_error("attach to an unknown session");
  }
  std::uint32_t index = joined->add_connection();
  writer welcome;
  welcome.put<std::int32_t>(CL_SUCCESS).put<std::int32_t>(CL_SUCCESS).put_string("");
  welcome.put<std::uint32_t>(index);
  try {
    // Inside the try: a client gone before its welcome must not leave the index registered.
    socket.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(opcode::attach) |
                                          static_cast<std::uint16_t>(opcode::reply)),
                      0, header.sequence, welcome);
    serve_requests(socket, joined, index);
  } catch (...) {
    joined->remove_connection(index);
    throw;
  }
}

// -- device_server::state: sessions -------------------------------------------

void device_server::state::serve_anchor(stream_socket& socket, std::shared_ptr<session> opened) {
  log(log_level::info, "session " + std::to_string(opened->id()) + " opened");
  writer welcome;
  welcome.put<std::int32_t>(CL_SUCCESS).put<std::int32_t>(CL_SUCCESS).put_string("");
  welcome.put<std::uint64_t>(opened->id());
  welcome.put<std::uint64_t>(opened->key()[0]).put<std::uint64_t>(opened->key()[1]);
  // The first connection carries notifications only; the session lives as long as it does.
  // The welcome is sent inside the try: a client gone before it arrives must still have its
  // session closed below, or the session would stay open (and count against max_clients).
  try {
    socket.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(opcode::hello) |
                                          static_cast<std::uint16_t>(opcode::reply)),
                      0, 0, welcome);
    std::vector<std::byte> ignored;
    socket.receive_frame(ignored, max_handshake_payload);
    log(log_level::warn, "session " + std::to_string(opened->id()) +
                             " sent a request on its notification connection; closing it");
  } catch (const std::exception&) {
  }
  opened->close_anchor();
  close_session(opened->id());
}

void device_server::state::close_session(std::uint64_t id) {
  std::shared_ptr<session> closing;
  {
    std::lock_guard lock(mutex_);
    auto found = sessions_.find(id);
    if (found == sessions_.end()) return;
    closing = found->second.opened;
    for (auto* connection : found->second.connections) connection->shutdown();
    sessions_.erase(found);
  }
  closing->close_fences();
  std::size_t objects = closing->object_count();
  closing->clear();
  log(log_level::info, "session " + std::to_string(id) + " closed; released " +
                           std::to_string(objects) + " objects");
}

// -- device_server::state: requests -------------------------------------------

void device_server::state::serve_requests(stream_socket& socket, std::shared_ptr<session> joined,
                                          std::uint32_t index) {
  socket.set_spin(std::chrono::microseconds(options_.spin_us));
  std::vector<std::byte> payload;
  cl_int deferred = CL_SUCCESS;
  std::mutex send_mutex;  // this thread's replies and those sent on completion
  completion_replies later(socket, send_mutex, *joined);
  while (true) {
    frame_header header = socket.receive_frame(payload, max_frame_payload);
    auto op = static_cast<opcode>(header.opcode);
    const bool wants_reply = (header.flags & flag_reply) != 0;
    call c{*joined,  index,   reader(payload),
           writer{}, payload, {},
           {},       {},      wants_reply && (header.flags & flag_reply_on_completion) != 0,
           nullptr};
    cl_int status = CL_SUCCESS;
    std::string message;
    try {
      dispatch(op, c);
      c.in.expect_end();
    } catch (const cl_failure& failure) {
      status = failure.code;
      message = failure.message;
    } catch (const std::bad_alloc&) {
      status = CL_OUT_OF_HOST_MEMORY;
      message = std::string("out of host memory serving ") + to_string(op);
    } catch (const decode_error&) {
      // Only expect_end() throws after a read enqueued: the device still writes its bytes.
      if (c.completion != nullptr) {
        joined->hold_until_complete(c.completion, std::move(c.reply_data),
                                    std::move(c.reply_charge));
        clReleaseEvent(c.completion);
      }
      throw;
    }
    joined->processed(index, header.sequence);
    if (c.completion != nullptr) {
      if (status == CL_SUCCESS) {
        // Answered by `later` once the read is over; this thread serves the next frame.
        std::span<const std::byte> fields = c.out.head();
        later.add(c.completion, op, header.sequence, {fields.begin(), fields.end()},
                  std::move(c.reply_data), std::move(c.reply_charge));
        continue;
      }
      joined->hold_until_complete(c.completion, std::move(c.reply_data), std::move(c.reply_charge));
      clReleaseEvent(c.completion);
    }
    if (status != CL_SUCCESS) {
      log(log_level::debug,
          std::string(to_string(op)) + " failed (" + std::to_string(status) + "): " + message);
    }
    if (!wants_reply) {
      if (deferred == CL_SUCCESS) deferred = status;
      continue;
    }
    writer reply;
    reply.put<std::int32_t>(status).put<std::int32_t>(deferred).put_string(message);
    deferred = CL_SUCCESS;
    c.reply_charge = {};  // given back before the reply: the client may ask again at once
    if (status == CL_SUCCESS) {
      reply.put_raw(c.out.head());
      reply.set_tail(c.reply_data.data(), c.reply_data.size());
    } else if (op == opcode::create_program_with_binary || op == opcode::link_program) {
      reply.put_raw(c.out.head());  // per-binary status / whether a program exists
    }
    std::lock_guard lock(send_mutex);
    socket.send_frame(
        static_cast<opcode>(header.opcode | static_cast<std::uint16_t>(opcode::reply)), 0,
        header.sequence, reply);
  }
}

}  // namespace troupe::remote::server
