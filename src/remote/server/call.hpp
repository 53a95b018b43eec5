// What a request handler works with: the session, the decoded request, the reply being built.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "remote/protocol/wire.hpp"
#include "remote/server/session.hpp"

namespace troupe::remote::server {

/// One request being served.
struct call {
  session& owner;
  reader in;
  writer out;
  /// The request's payload buffer: a handler may take it over to keep bulk bytes alive.
  std::vector<std::byte>& payload;
  /// Bulk reply bytes, sent after `out` (their length is already in `out`).
  std::vector<std::byte> reply_data;
  /// References to every object the request names, so none goes away while it is served.
  std::vector<object_ref> held;
  /// The request may be answered once its command completes (flag_reply_on_completion): a
  /// read that does so enqueues without waiting and leaves its event here (one reference).
  bool reply_on_completion = false;
  cl_event completion = nullptr;

  /// The handle named by the next id in the request.
  template <class Handle>
  Handle object(object_kind kind, cl_int invalid) {
    return object_by_id<Handle>(in.get<std::uint64_t>(), kind, invalid);
  }
  template <class Handle>
  Handle object_by_id(std::uint64_t id, object_kind kind, cl_int invalid) {
    held.push_back(owner.find(id, kind, invalid));
    return held.back()->as<Handle>();
  }
  /// An array of ids turned into handles (an empty array gives an empty vector).
  template <class Handle>
  std::vector<Handle> objects(object_kind kind, cl_int invalid, std::size_t max_count = 1 << 16) {
    std::vector<Handle> handles;
    for (auto id : in.get_array<std::uint64_t>(max_count)) {
      handles.push_back(object_by_id<Handle>(id, kind, invalid));
    }
    return handles;
  }
};

/// Throws cl_failure when an OpenCL call failed, naming the call.
inline void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw cl_failure{status, what};
}

/// The fields every enqueue starts with: the queue, the wait list and the id of the event the
/// client wants (0: none).
class command {
 public:
  explicit command(call& c);

  [[nodiscard]] cl_command_queue queue() const { return queue_; }
  [[nodiscard]] cl_uint wait_count() const { return static_cast<cl_uint>(wait_.size()); }
  [[nodiscard]] const cl_event* wait_list() const { return wait_.empty() ? nullptr : wait_.data(); }
  /// Where the OpenCL call puts its event: always somewhere, so that staging can be tied to it.
  cl_event* event() { return &event_; }
  /// Where the call puts its event when the client wants one, else nowhere (no event to make
  /// and release on the hot path of launches).
  cl_event* event_if_wanted() { return event_id_ != 0 ? &event_ : nullptr; }

  /// Registers the event under the client's id, or, when the command failed, registers a
  /// failed user event in its place (so that waiting on it reports the failure) and throws.
  void finish(cl_int status, const char* what);
  /// Registers a failed user event under the client's id, if the client asked for an event
  /// and none is registered yet: waiting on it then reports the failure instead of hanging.
  void register_failed_event(cl_int status);
  /// Keeps `bytes` alive until the command completes (its event must exist).
  void keep_until_complete(std::vector<std::byte>&& bytes);
  /// Reads: blocking unless the reply may wait for completion (flag_reply_on_completion).
  [[nodiscard]] cl_bool blocking_read() const {
    return call_.reply_on_completion ? CL_FALSE : CL_TRUE;
  }
  /// After a read was enqueued: a non-blocking one leaves its event for the reply to wait on.
  void finish_read() {
    if (!call_.reply_on_completion) return;
    clRetainEvent(event_);
    call_.completion = event_;
  }

  command(const command&) = delete;
  command& operator=(const command&) = delete;
  ~command();

 private:
  call& call_;
  cl_command_queue queue_;
  std::vector<cl_event> wait_;
  std::uint64_t event_id_;
  cl_event event_ = nullptr;
  bool registered_ = false;
};

// Handlers, one per opcode family (handlers_*.cpp).
void handle_object_request(opcode op, call& c);
void handle_command(opcode op, call& c);
void handle_get_info(call& c);

}  // namespace troupe::remote::server
