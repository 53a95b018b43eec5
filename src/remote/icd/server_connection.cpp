#include "remote/icd/server_connection.hpp"

#include "remote/protocol/tls_stream.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

namespace troupe::remote::icd {

namespace {

int log_level() {
  static const int level = [] {
    const char* setting = std::getenv("TROUPE_ICD_LOG");
    if (setting == nullptr) return 1;
    if (std::strcmp(setting, "quiet") == 0) return 0;
    if (std::strcmp(setting, "debug") == 0) return 2;
    return 1;
  }();
  return level;
}

opcode reply_to(opcode op) {
  return static_cast<opcode>(static_cast<std::uint16_t>(op) |
                             static_cast<std::uint16_t>(opcode::reply));
}

// Receives the payload of a reply frame whose header was read; the bulk bytes of a successful
// reply go to `bulk` when given.
void receive_reply_body(connection& link, const frame_header& header, opcode op, reply& answer,
                        void* bulk, std::size_t size) {
  if (header.opcode != static_cast<std::uint16_t>(reply_to(op))) {
    throw decode_error("reply with opcode " + std::to_string(header.opcode) + " to sequence " +
                       std::to_string(header.sequence) + ", a " + to_string(op));
  }
  auto note_deferred = [&](cl_int deferred) {
    cl_int none = CL_SUCCESS;
    if (deferred != CL_SUCCESS) link.deferred.compare_exchange_strong(none, deferred);
  };
  // Status, deferred status and an empty message come first in every reply.
  constexpr std::size_t prefix = 4 + 4 + 8;
  std::size_t bulk_prefix = bulk != nullptr ? prefix + 8 : prefix;
  if (bulk != nullptr && header.payload_size == bulk_prefix + size) {
    answer.payload.resize(bulk_prefix);
    link.socket.receive_exact(answer.payload.data(), bulk_prefix);
    reader peek(answer.payload);
    answer.status = peek.get<std::int32_t>();
    note_deferred(peek.get<std::int32_t>());
    auto message_size = peek.get<std::uint64_t>();
    auto bulk_size = peek.get<std::uint64_t>();
    if (answer.status != CL_SUCCESS || message_size != 0 || bulk_size != size) {
      throw decode_error("bulk reply does not match its request");
    }
    link.socket.receive_exact(bulk, size);
    answer.fields_at = answer.payload.size();
    return;
  }
  answer.payload.resize(header.payload_size);
  link.socket.receive_exact(answer.payload.data(), answer.payload.size());
  reader fields(answer.payload);
  answer.status = fields.get<std::int32_t>();
  note_deferred(fields.get<std::int32_t>());
  answer.message = fields.get_string();
  answer.fields_at = answer.payload.size() - fields.remaining();
  if (answer.status == CL_SUCCESS && bulk != nullptr) {
    throw decode_error("bulk reply of the wrong size");
  }
}

// How long a server may leave a heartbeat unanswered before it counts as lost
// (TROUPE_ICD_HEARTBEAT_TIMEOUT, seconds, default 30; 0: never).
std::chrono::milliseconds heartbeat_timeout() {
  static const auto timeout = [] {
    constexpr std::chrono::milliseconds fallback(30000);
    const char* setting = std::getenv("TROUPE_ICD_HEARTBEAT_TIMEOUT");
    if (setting == nullptr || *setting == '\0') return fallback;
    char* end = nullptr;
    double seconds = std::strtod(setting, &end);
    if (*end != '\0' || !(seconds >= 0) || seconds > 86400) {
      warn(std::string("TROUPE_ICD_HEARTBEAT_TIMEOUT is '") + setting +
           "', expected seconds from 0 (never) to 86400; using 30");
      return fallback;
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  }();
  return timeout;
}

}  // namespace

// How long a thread waiting for a reply polls before it sleeps (TROUPE_ICD_SPIN_US, default
// 500): long enough for a short kernel's clFinish, as the vendors' own drivers spin too.
std::chrono::microseconds reply_spin() {
  static const auto spin = [] {
    const char* setting = std::getenv("TROUPE_ICD_SPIN_US");
    return std::chrono::microseconds(setting != nullptr ? std::max(0, std::atoi(setting)) : 500);
  }();
  return spin;
}

void warn(const std::string& message) {
  if (log_level() >= 1) std::fprintf(stderr, "troupe-icd: warning: %s\n", message.c_str());
}

void debug(const std::string& message) {
  if (log_level() >= 2) std::fprintf(stderr, "troupe-icd: %s\n", message.c_str());
}

server_connection::server_connection(std::string host, std::uint16_t port, std::string token,
                                     std::shared_ptr<const tls_context> tls)
    : host_(std::move(host)),
      port_(port),
      token_(std::move(token)),
      tls_(std::move(tls)),
      endpoint_(host_ + ":" + std::to_string(port_)) {}

stream_socket server_connection::connect(int timeout_ms) {
  stream_socket socket = stream_socket::connect(host_, port_, timeout_ms);
  if (tls_ != nullptr) {
    try {
      socket.secure(tls_stream::connect(
          socket.fd(), *tls_, host_,
          std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms)));
    } catch (const connection_lost& failed) {
      // A plain server closes a connection that starts with TLS: say what that may mean.
      const std::string why = failed.what();
      if (why.find("closed the connection") == std::string::npos &&
          why.find("reset by peer") == std::string::npos) {
        throw;
      }
      throw connection_lost(why + " (a server started without --tls-cert closes TLS connections)");
    }
  }
  return socket;
}

void server_connection::open(int timeout_ms) {
  anchor_ = connect(timeout_ms);
  writer hello;
  hello.put<std::uint32_t>(protocol_magic).put<std::uint16_t>(protocol_version).put_string(token_);
  anchor_.send_frame(opcode::hello, flag_reply, 0, hello);
  std::vector<std::byte> payload;
  set_receive_timeout(anchor_.fd(), timeout_ms);
  frame_header header = anchor_.receive_frame(payload, max_handshake_payload);
  // From now on a frame stalled halfway counts as a silent server too (see the heartbeat).
  set_receive_timeout(anchor_.fd(), static_cast<int>(heartbeat_timeout().count()));
  reader in(payload);
  auto status = in.get<std::int32_t>();
  in.get<std::int32_t>();
  auto message = in.get_string();
  if (header.opcode != static_cast<std::uint16_t>(reply_to(opcode::hello)) ||
      status != CL_SUCCESS) {
    throw connection_lost("refused: " +
                          (message.empty() ? std::string("no reason given") : message));
  }
  session_ = in.get<std::uint64_t>();
  key_[0] = in.get<std::uint64_t>();
  key_[1] = in.get<std::uint64_t>();
  local_name_ = in.get_string();
  const char* local = std::getenv("TROUPE_ICD_LOCAL_SOCKET");
  if (!peer_is_loopback(anchor_.fd()) || (local != nullptr && std::string(local) == "0")) {
    local_name_.clear();  // through a tunnel, the server's host is not this one
  }
  // Detached: a server lives as long as the program (servers() in api_platform.cpp), and its
  // listener ends on its own once the server is lost.
  std::thread([this] { listen_for_notifications(); }).detach();
}

// A request connection: through the server's local socket where it has one on this host, else
// (or if that fails: the server may have been started in another network namespace) by TCP.
stream_socket server_connection::connect_request_socket() {
  std::string local;
  {
    std::lock_guard lock(mutex_);
    local = local_name_;
  }
  // A host reached by TLS is reached by TLS only, whatever its welcome says.
  if (!local.empty() && tls_ == nullptr) {
    try {
      return stream_socket::connect_local(local);
    } catch (const connection_lost& error) {
      std::lock_guard lock(mutex_);
      if (!local_name_.empty()) {
        warn(std::string(error.what()) + "; using TCP to " + endpoint_ + " instead");
        local_name_.clear();
      }
    }
  }
  return connect(10000);
}

std::unique_ptr<connection> server_connection::attach() {
  auto made = std::make_unique<connection>();
  made->socket = connect_request_socket();
  made->socket.set_spin(reply_spin());
  writer attach;
  attach.put<std::uint32_t>(protocol_magic).put<std::uint16_t>(protocol_version);
  attach.put_string(token_).put<std::uint64_t>(session_);
  attach.put<std::uint64_t>(key_[0]).put<std::uint64_t>(key_[1]);
  made->socket.send_frame(opcode::attach, flag_reply, 0, attach);
  reply answer;
  set_receive_timeout(made->socket.fd(), 10000);
  frame_header header = made->socket.receive_header(max_handshake_payload);
  if (header.sequence != 0) throw decode_error("attach reply out of order");
  receive_reply_body(*made, header, opcode::attach, answer, nullptr, 0);
  set_receive_timeout(made->socket.fd(), 0);
  if (answer.status != CL_SUCCESS) {
    throw connection_refused(answer.message.empty() ? "attach refused, no reason given"
                                                    : answer.message);
  }
  made->index = answer.fields().get<std::uint32_t>();
  return made;
}

void server_connection::mark_lost(const std::string& why) {
  if (!lost_.exchange(true)) {
    warn("lost the server " + endpoint_ + " (" + why + "); its platform's calls fail from now on");
    anchor_.shutdown();
    // Threads waiting for replies from a server that went silent (not closed) wake up too.
    std::lock_guard lock(mutex_);
    for (auto& link : connections_) link->socket.shutdown();
    for (auto& link : bulk_connections_) link->socket.shutdown();
  }
}

remote_object* server_connection::object_for(object_kind kind, std::uint64_t id) {
  if (id == 0) return nullptr;
  std::lock_guard lock(mutex_);
  if (auto found = objects_.find(id); found != objects_.end()) return found->second;
  remote_object* object = nullptr;
  switch (kind) {
    case object_kind::platform:
      object = new _cl_platform_id(kind, this, id);
      break;
    case object_kind::device:
      object = new _cl_device_id(kind, this, id);
      break;
    case object_kind::context:
      object = new _cl_context(kind, this, id);
      break;
    case object_kind::queue:
      object = new _cl_command_queue(kind, this, id);
      break;
    case object_kind::mem:
      object = new _cl_mem(kind, this, id);
      break;
    case object_kind::sampler:
      object = new _cl_sampler(kind, this, id);
      break;
    case object_kind::program:
      object = new _cl_program(kind, this, id);
      break;
    case object_kind::kernel:
      object = new _cl_kernel(kind, this, id);
      break;
    case object_kind::event:
      object = new _cl_event(kind, this, id);
      break;
    case object_kind::none:
      return nullptr;
  }
  // Found, not created: the application holds no reference (OpenCL's info queries add none).
  object->references = 0;
  objects_.emplace(id, object);
  return object;
}

void server_connection::register_object(remote_object* object) {
  std::lock_guard lock(mutex_);
  objects_[object->id] = object;
}

void server_connection::forget_object(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  objects_.erase(id);
}

std::uint64_t server_connection::add_callback(std::function<void(cl_int)> callback) {
  std::lock_guard lock(mutex_);
  std::uint64_t id = next_callback_++;
  callbacks_.emplace(id, std::move(callback));
  return id;
}

// Besides notifications, this thread keeps the heartbeat: when the server has said nothing for
// a third of the timeout it sends a ping on the first connection, which the server answers
// whatever its request connections are busy with (a long kernel). A ping unanswered for the
// whole timeout means the server stopped (paused, or the network cut): it is marked lost,
// which fails the calls waiting on it. Requests and replies carry nothing extra.
void server_connection::listen_for_notifications() {
  using clock = std::chrono::steady_clock;
  const auto timeout = heartbeat_timeout();
  const auto quiet = std::max(timeout / 3, std::chrono::milliseconds(1));
  auto heard = clock::now();
  std::optional<clock::time_point> pinged;  // an unanswered heartbeat, sent then
  std::vector<std::byte> payload;
  try {
    while (true) {
      if (timeout.count() > 0 && !anchor_.wait_readable(quiet)) {
        // Nothing arrived: decided on this thread's own clock, after looking at the socket, so
        // a client that was itself paused does not blame the server.
        auto now = clock::now();
        if (pinged && now - *pinged >= timeout) {
          throw connection_lost(
              "no answer to a heartbeat within " + std::to_string(timeout.count()) +
              " ms (TROUPE_ICD_HEARTBEAT_TIMEOUT): the server is paused or unreachable");
        }
        if (!pinged && now - heard >= quiet) {
          anchor_.send_frame(opcode::ping, flag_reply, 0, writer{});
          pinged = now;
        }
        continue;
      }
      frame_header header = anchor_.receive_frame(payload, max_handshake_payload);
      heard = clock::now();
      pinged.reset();
      if (header.opcode == static_cast<std::uint16_t>(reply_to(opcode::ping))) continue;
      if (header.opcode != static_cast<std::uint16_t>(opcode::event_callback)) {
        throw decode_error("unexpected notification " + std::to_string(header.opcode));
      }
      reader in(payload);
      auto callback_id = in.get<std::uint64_t>();
      auto status = in.get<std::int32_t>();
      std::function<void(cl_int)> callback;
      {
        std::lock_guard lock(mutex_);
        if (auto found = callbacks_.find(callback_id); found != callbacks_.end()) {
          callback = std::move(found->second);
          callbacks_.erase(found);
        }
      }
      if (callback) callback(status);
    }
  } catch (const std::exception& error) {
    mark_lost(error.what());
  }
  fail_pending_callbacks(CL_DEVICE_NOT_AVAILABLE);
}

void server_connection::fail_pending_callbacks(cl_int status) {
  // Callbacks whose event will never be reported run with an error status, so that a program
  // waiting for one does not hang.
  std::unordered_map<std::uint64_t, std::function<void(cl_int)>> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(callbacks_);
  }
  for (auto& [id, callback] : pending) callback(status);
}

void server_connection::take_replies(connection& link, std::unique_lock<std::mutex>& lock,
                                     const std::function<bool()>& done) {
  while (!done() && !link.broken) {
    if (link.receiving) {
      replies_changed_.wait(lock);
      continue;
    }
    link.receiving = true;
    lock.unlock();
    std::string failure;
    try {
      receive_one(link);
    } catch (const std::exception& error) {
      failure = error.what();
    }
    lock.lock();
    link.receiving = false;
    if (!failure.empty()) {
      link.broken = true;
      // Their bytes never come: nobody may wait for them.
      std::erase_if(pending_reads_, [&](const auto& entry) { return entry.second.link == &link; });
    }
    replies_changed_.notify_all();
    if (!failure.empty()) {
      lock.unlock();
      mark_lost(failure);
      lock.lock();
    }
  }
}

void server_connection::receive_one(connection& link) {
  frame_header header = link.socket.receive_header(max_frame_payload);
  connection::awaited_reply call;
  pending_read read;
  {
    std::lock_guard lock(replies_mutex_);
    if (!link.awaited.done && link.awaited.sequence == header.sequence) {
      call = link.awaited;
    } else {
      auto found = pending_reads_.find({&link, header.sequence});
      if (found == pending_reads_.end()) {
        throw decode_error("reply to sequence " + std::to_string(header.sequence) +
                           ", which awaits none");
      }
      read = found->second;  // stays listed until its bytes are in place
    }
  }
  if (call.answer != nullptr) {
    receive_reply_body(link, header, call.op, *call.answer, call.bulk, call.size);
    std::lock_guard lock(replies_mutex_);
    link.awaited.done = true;
    return;
  }
  reply answer;
  receive_reply_body(link, header, read.op, answer, read.destination, read.size);
  if (answer.status == CL_SUCCESS) {
    if (read.unpack) read.unpack();
  } else {
    debug(std::string(to_string(read.op)) + " failed: " + answer.message);
    cl_int none = CL_SUCCESS;
    (read.failure != nullptr ? *read.failure : link.deferred)
        .compare_exchange_strong(none, answer.status);
  }
  std::lock_guard lock(replies_mutex_);
  pending_reads_.erase({&link, header.sequence});
}

cl_int server_connection::settle_reads(const std::function<bool(const pending_read&)>& selected) {
  std::unique_lock lock(replies_mutex_);
  // Those pending now; reads issued later are not this caller's concern.
  std::vector<std::pair<const connection*, std::uint32_t>> awaited;
  for (const auto& [key, read] : pending_reads_) {
    if (selected(read)) awaited.push_back(key);
  }
  for (const auto& key : awaited) {
    if (lost_) {
      std::erase_if(pending_reads_, [&](const auto& entry) { return selected(entry.second); });
      return CL_OUT_OF_RESOURCES;
    }
    auto found = pending_reads_.find(key);
    if (found == pending_reads_.end()) continue;
    take_replies(*found->second.link, lock, [&] { return !pending_reads_.contains(key); });
  }
  return lost_ ? CL_OUT_OF_RESOURCES : CL_SUCCESS;
}

}  // namespace troupe::remote::icd
