// The ICD's side of one server: the session, a connection per thread, and the requests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "remote/icd/objects.hpp"
#include "remote/protocol/socket.hpp"

namespace troupe::remote::icd {

/// One connection of the session, used by one thread at a time (rOpenCL's per-thread
/// connections: a thread blocked in clFinish does not hold up the others).
struct connection {
  stream_socket socket;
  std::uint32_t index = 0;  ///< the server's number for it, within the session
  /// Guards sending: `sequence`, `held` and the socket's sending side. Only the owning thread
  /// receives, without it; another thread takes it only to send `held` (see request::prepare).
  std::mutex mutex;
  std::uint32_t sequence = 0;
  /// Encoded frames not sent yet: kernel arguments, which wait for the next frame that is sent
  /// (their launch, usually), so that a launch and its arguments cost one system call.
  std::vector<std::byte> held;
  std::atomic<bool> holding{false};
  cl_int deferred = CL_SUCCESS;  ///< the first failure of a pipelined frame, not yet reported
};

/// A decoded reply.
struct reply {
  cl_int status = CL_SUCCESS;
  std::string message;
  std::vector<std::byte> payload;
  std::size_t fields_at = 0;
  [[nodiscard]] reader fields() const {
    return reader(std::span<const std::byte>(payload).subspan(fields_at));
  }
};

/// A server named in the hostfile, and the session the driver holds with it.
class remote_server {
 public:
  remote_server(std::string host, std::uint16_t port, std::string token);
  ~remote_server();

  /// Connects and opens the session; throws connection_lost or std::runtime_error.
  void open(int timeout_ms);

  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
  [[nodiscard]] bool lost() const { return lost_; }
  /// Marks the server gone (logged once); every later call fails at once.
  void mark_lost(const std::string& why);

  /// A fresh id for an object this client creates.
  std::uint64_t new_id() { return next_id_++; }

  /// The object for an id the server sent (info queries, platform and device lists), created
  /// on first sight as a borrowed object with no application reference.
  remote_object* object_for(object_kind kind, std::uint64_t id);
  void register_object(remote_object* object);
  void forget_object(std::uint64_t id);

  /// The calling thread's connection to this server (made on first use).
  connection& this_thread_connection();
  /// Sends the frames connection `index` holds back, if any (another thread's connection).
  void release_held(std::uint32_t index);

  /// Registers a callback to run when the server reports `id`; returns its id.
  std::uint64_t add_callback(std::function<void(cl_int)> callback);

 private:
  void listen_for_notifications();
  void fail_pending_callbacks(cl_int status);

  std::string host_;
  std::uint16_t port_;
  std::string token_;
  std::string endpoint_;
  std::atomic<bool> lost_{false};
  std::uint64_t session_ = 0;
  std::uint64_t key_[2] = {0, 0};
  stream_socket anchor_;
  std::thread listener_;
  std::atomic<std::uint64_t> next_id_{1};

  std::mutex mutex_;  // guards everything below
  std::vector<std::unique_ptr<connection>> connections_;
  std::vector<connection*> idle_;
  std::unordered_map<std::uint64_t, remote_object*> objects_;
  std::unordered_map<std::uint64_t, std::function<void(cl_int)>> callbacks_;
  std::uint64_t next_callback_ = 1;

  friend struct thread_connections;
};

/// A request being built: its fields, the objects it names, and how it is sent.
class request {
 public:
  explicit request(opcode op) : op_(op) {}

  /// The id of `object` (0 for null) as the next field; the object orders the request.
  request& object(const remote_object* object);
  /// A length-prefixed array of object ids.
  template <class Handle>
  request& objects(const Handle* handles, std::size_t count) {
    std::vector<std::uint64_t> ids(count);
    for (std::size_t i = 0; i < count; ++i) {
      ids[i] = handles[i] != nullptr ? handles[i]->id : 0;
      if (handles[i] != nullptr) named_.push_back(handles[i]);
    }
    fields.put_array<std::uint64_t>(ids);
    return *this;
  }

  /// Sends without waiting; a failure shows up later (deferred error, failed event).
  cl_int send(remote_server& server, cl_int when_lost = CL_DEVICE_NOT_AVAILABLE);
  /// Sends and waits for the reply; returns its status.
  cl_int call(remote_server& server, reply& answer, cl_int when_lost = CL_DEVICE_NOT_AVAILABLE);
  /// Like call(), but a successful reply's bulk bytes go straight to `bulk` (`size` bytes).
  cl_int call_into(remote_server& server, reply& answer, void* bulk, std::size_t size,
                   cl_int when_lost = CL_OUT_OF_RESOURCES);
  /// True when every object named so far lives on `server`: another server's ids name other
  /// objects there, or none.
  [[nodiscard]] bool names_only(const remote_server& server) const {
    for (const remote_object* named : named_) {
      if (named->server != &server) return false;
    }
    return true;
  }
  /// After call(): the deferred failure of earlier pipelined frames on this connection, if
  /// the call itself succeeded (for calls that synchronize: finish, wait, blocking transfers).
  cl_int with_deferred(remote_server& server, cl_int status);

  writer fields;

 private:
  connection& prepare(remote_server& server);
  [[nodiscard]] cl_int check_size() const;
  opcode op_;
  std::vector<const remote_object*> named_;
};

/// Logs a warning (TROUPE_ICD_LOG=quiet silences it, =debug adds detail).
void warn(const std::string& message);
void debug(const std::string& message);

}  // namespace troupe::remote::icd
