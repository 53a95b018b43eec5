// The part every enqueued command has in common: its queue, its wait list and its event.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <vector>

#include "remote/server/call.hpp"

namespace troupe::remote::server {

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
  /// Reads: blocking unless the reply may wait for completion (flag_reply_on_completion).
  [[nodiscard]] cl_bool blocking_read() const {
    return call_.reply_on_completion ? CL_FALSE : CL_TRUE;
  }
  /// finish() of a read: a non-blocking one enqueued leaves its event for the reply to wait
  /// on first, so that its bytes stay until the device has written them even when registering
  /// the client's event fails.
  void finish_read(cl_int status, const char* what) {
    if (status == CL_SUCCESS && call_.reply_on_completion) {
      clRetainEvent(event_);
      call_.completion = event_;
    }
    finish(status, what);
  }
  /// finish() of a write from `bytes`: a non-blocking one enqueued keeps them (and `charge`)
  /// until it completes first, even when registering the client's event fails.
  void finish_write(cl_int status, const char* what, bool blocking, host_bytes&& bytes,
                    session_quota::charge charge) {
    if (status == CL_SUCCESS && !blocking) keep_until_complete(std::move(bytes), std::move(charge));
    finish(status, what);
  }

  command(const command&) = delete;
  command& operator=(const command&) = delete;
  ~command();

 private:
  /// Keeps `bytes`, and what they take from the session's host memory quota, until the
  /// command completes (its event must exist).
  void keep_until_complete(host_bytes&& bytes, session_quota::charge charge);

  call& call_;
  cl_command_queue queue_;
  std::vector<cl_event> wait_;
  std::uint64_t event_id_;
  cl_event event_ = nullptr;
  bool registered_ = false;
  session_quota::charge event_charge_;  // the client's event, counted before the enqueue
};

}  // namespace troupe::remote::server
