// Replies that wait for their command: a non-blocking read is answered with its bytes once it
// completes, while the connection goes on serving later frames.
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "remote/protocol/opcode.hpp"
#include "remote/protocol/socket.hpp"
#include "remote/server/host_bytes.hpp"
#include "remote/server/session_quota.hpp"

namespace troupe::remote::server {

class session;

/// One connection's replies on completion (flag_reply_on_completion). A thread of its own sends
/// each once its event is over, on the connection's socket under `send_mutex`, which the
/// connection's own replies take too. Replies carry their request's sequence: order is free.
class completion_replies {
 public:
  completion_replies(stream_socket& socket, std::mutex& send_mutex, session& owner);
  /// Stops sending. What still waits (the connection is gone) goes to the session, which keeps
  /// the bytes alive until the device has written them.
  ~completion_replies();
  completion_replies(const completion_replies&) = delete;
  completion_replies& operator=(const completion_replies&) = delete;

  /// Sends the reply to `sequence` once `event` (a reference, taken over) is over: on success
  /// the reply prefix, `fields`, then `data` (where the device writes); on failure its status.
  /// `charge` (what `data` takes from the session's host memory quota) goes before the reply.
  void add(cl_event event, opcode op, std::uint32_t sequence, std::vector<std::byte> fields,
           host_bytes data, session_quota::charge charge);

  /// Called back by OpenCL (through a token: see the .cpp): some event completed.
  void wake();
  /// Whether a reply still waits for its command (its session is not idle meanwhile).
  [[nodiscard]] bool pending();

 private:
  struct waiting {
    cl_event event;
    opcode op;
    std::uint32_t sequence;
    std::vector<std::byte> fields;
    host_bytes data;
    std::uint64_t token;
    session_quota::charge charge;
  };
  void run();
  void send(const waiting& over, cl_int status);

  stream_socket& socket_;
  std::mutex& send_mutex_;
  session& owner_;
  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::vector<waiting> waiting_;
  bool woken_ = false;
  bool stopping_ = false;
  bool broken_ = false;  // a send failed: the connection is going
  std::thread thread_;   // started with the first reply
};

}  // namespace troupe::remote::server
