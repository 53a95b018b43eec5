// One client's session: the OpenCL objects it created, named by ids that mean nothing to any
// other session.
#pragma once

#include <CL/cl.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "remote/protocol/opcode.hpp"
#include "remote/protocol/socket.hpp"
#include "remote/server/host_bytes.hpp"
#include "remote/server/pinned_staging.hpp"
#include "remote/server/session_quota.hpp"

namespace troupe::remote::server {

/// An OpenCL call failed, or a request named something it may not: the reply's status.
struct cl_failure {
  cl_int code;
  std::string message;
};

/// One reference to an OpenCL object, released when the last user lets go.
class cl_object {
 public:
  cl_object(object_kind kind, void* handle) : kind_(kind), handle_(handle) {}
  cl_object(const cl_object&) = delete;
  cl_object& operator=(const cl_object&) = delete;
  ~cl_object();

  [[nodiscard]] object_kind kind() const { return kind_; }
  template <class Handle>
  [[nodiscard]] Handle as() const {
    return static_cast<Handle>(handle_);
  }

  /// Kernels: what each argument is, found once (the argument checks ask on every set).
  /// Values are kind_of_argument's, -1 where not found yet; guarded by `cache_mutex`.
  std::mutex cache_mutex;
  std::vector<int> argument_kinds;
  /// Programs: the log of a build the server refused (build_refusals.hpp), reported in place of
  /// OpenCL's until the next build; guarded by `cache_mutex`.
  std::string refused_build_log;
  /// Contexts: the server's own queue that zeroes new memory objects, made at the first;
  /// guarded by `cache_mutex`.
  cl_command_queue zero_queue = nullptr;
  /// What the object takes from its session's quotas, given back when it goes.
  session_quota::charge object_charge;
  session_quota::charge memory_charge;

 private:
  object_kind kind_;
  void* handle_;
};
using object_ref = std::shared_ptr<cl_object>;

/// Takes one more reference to `handle` (platforms and root devices have none to take).
void retain_handle(object_kind kind, void* handle);

class session : public std::enable_shared_from_this<session> {
 public:
  /// A session bound by the quotas of `options`, which logs its refusals to `log`.
  session(std::uint64_t id, std::array<std::uint64_t, 2> key, stream_socket* anchor,
          const server_options& options, session_quota::logger log);

  [[nodiscard]] std::uint64_t id() const { return id_; }
  [[nodiscard]] const std::array<std::uint64_t, 2>& key() const { return key_; }
  /// A pinned buffer for a transfer of `size` bytes on `queue` (pinned_staging::lend); when the
  /// pool has none, the finished commands the session still holds give theirs back first.
  staging_lease lend_pinned(cl_command_queue queue, std::size_t size);
  /// What the session may hold, and what it holds now.
  [[nodiscard]] session_quota& quota() { return quota_; }
  /// Refuses a request of this session: logs `message` with the session's id and throws
  /// cl_failure{code, message}.
  [[noreturn]] void refuse(cl_int code, const std::string& message) const {
    quota_.refuse(code, message);
  }

  /// Registers an object the client named `id`; the table takes over one reference and the
  /// charges. Without an object charge it takes one itself. A reused, zero or server-range id,
  /// or one past the object quota, is refused (the object is released).
  void add(std::uint64_t id, object_kind kind, void* handle, session_quota::charge memory = {},
           session_quota::charge object = {});
  /// The object named `id`; a missing id or one of another kind fails with `invalid`.
  object_ref find(std::uint64_t id, object_kind kind, cl_int invalid) const;
  /// The id of an object the server found (an info query, a platform list); registers it with
  /// a new server-range id and a new reference if the client has no id for it yet.
  std::uint64_t id_for(object_kind kind, void* handle);
  /// Drops the client's id; the object goes when its last command is done with it.
  void release(std::uint64_t id);
  /// Drops every object (the client is gone).
  void clear();
  /// Keeps one reference to a command's event, and the bytes it reads, until it is over. PoCL
  /// 3.1 aborts the process when a marker or barrier, its event released, sees an event it
  /// waits for fail; and it calls no callback for a command that fails, so a non-blocking
  /// write's bytes cannot be freed by one. Finished entries go at the next call, the rest when
  /// the session closes.
  void hold_until_complete(cl_event event, host_bytes bytes = {},
                           session_quota::charge charge = {});
  /// Takes `bytes` from the host memory quota for `what`, after letting go of the held
  /// commands that are over (so a finished write never counts against the next one) and, if
  /// still short, of the idle pinned read buffers.
  session_quota::charge take_host_memory(std::uint64_t bytes, const char* what);
  /// Keeps a user event the client created until the session closes, which completes it if
  /// the client never set it (released or not): then every command of the session can end.
  void track_user_event(cl_event event);
  /// clSetUserEventStatus for the client; a second call reaches the platform, which decides, as
  /// it would locally (NVIDIA accepts one, PoCL refuses it). A user event the client has set or
  /// is setting is not clear()'s to complete, and one clear() completes is no longer the
  /// client's: never both at once (a race inside the platform). No lock is held during the
  /// call: the platform runs event callbacks in it, which send on the network.
  cl_int set_user_event_status(cl_event event, cl_int status);
  /// True once clear() ran.
  [[nodiscard]] bool closed() const;
  [[nodiscard]] std::size_t object_count() const;

  /// Numbers a new request connection of this session.
  std::uint32_t add_connection();
  /// Records that connection `index` processed its frame `sequence`.
  void processed(std::uint32_t index, std::uint32_t sequence);
  /// The connection is gone: nothing fenced behind it waits any longer.
  void remove_connection(std::uint32_t index);
  /// Waits until connection `index` processed frame `sequence`, or is gone.
  void fence(std::uint32_t index, std::uint32_t sequence);
  /// Wakes every fence for good (the session is closing).
  void close_fences();

  /// Sends a notification on the session's first connection; false once that is closed.
  bool notify(opcode op, const writer& payload);
  void close_anchor();

 private:
  // First, so destroyed last: once all the session held is freed, its memory goes back to the
  // system (memory_return.hpp).
  struct notes_memory_freed {
    notes_memory_freed() = default;
    notes_memory_freed(const notes_memory_freed&) = delete;
    notes_memory_freed& operator=(const notes_memory_freed&) = delete;
    ~notes_memory_freed();
  } notes_memory_freed_;
  const std::uint64_t id_;
  const std::array<std::uint64_t, 2> key_;
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, object_ref> objects_;
  std::unordered_map<void*, std::uint64_t> ids_by_handle_;
  struct held_command {
    cl_event event;
    host_bytes bytes;
    session_quota::charge charge;
  };
  // Takes the finished held commands out (called under mutex_), to be released outside it.
  std::vector<held_command> take_finished();
  /// take_finished() under the lock, then their events and bytes released outside it; true
  /// when any were.
  bool release_finished();
  session_quota quota_;
  pinned_staging staging_;
  std::vector<held_command> held_;     // see hold_until_complete()
  std::vector<cl_event> user_events_;  // see track_user_event()
  // Who sets each user event: the client (its calls in flight, and whether one succeeded) or
  // clear(). See set_user_event_status().
  struct user_event_setting {
    unsigned calls = 0;
    bool set = false;
    bool by_clear = false;
  };
  std::unordered_map<cl_event, user_event_setting> user_event_settings_;
  bool closed_ = false;  // see clear()
  std::uint64_t next_server_id_ = std::uint64_t{1} << 63;
  std::mutex progress_mutex_;
  std::condition_variable progress_changed_;
  std::unordered_map<std::uint32_t, std::uint32_t> progress_;  // connection -> last processed
  std::uint32_t next_connection_ = 1;
  bool fences_closed_ = false;
  std::mutex anchor_mutex_;
  stream_socket* anchor_;
};

/// Event callbacks reach OpenCL as a number, not as memory the callback frees: PoCL never calls
/// back for an event that fails, and a call after the session closed must find nothing. The
/// number stands for the session and the client's callback id until taken or until the session
/// closes (clear()).
std::uint64_t register_event_callback(session& owner, std::uint64_t callback_id);
/// The session (null once closed) and callback id of `token`, which is forgotten.
std::pair<std::shared_ptr<session>, std::uint64_t> take_event_callback(std::uint64_t token);

/// Ids at or above this are handed out by the server; the client names its own below it.
inline constexpr std::uint64_t first_server_id = std::uint64_t{1} << 63;

}  // namespace troupe::remote::server
