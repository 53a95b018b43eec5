// A request to a server: its fields, the objects it names, and how it is sent.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "remote/icd/objects.hpp"
#include "remote/icd/server_connection.hpp"
#include "remote/protocol/wire.hpp"

namespace troupe::remote::icd {

/// A request being built: its fields, the objects it names, and how it is sent.
class request {
 public:
  explicit request(opcode op) : op_(op) {}

  /// The id of `object` (0 for null) as the next field; the object orders the request.
  request& object(const remote_object* object);
  /// Sends on `link` instead of the calling thread's connection (a stripe of a large transfer).
  request& on(connection& link) {
    link_ = &link;
    return *this;
  }
  /// Processed on the server only once connection `index` has processed frame `sequence`:
  /// a fence before the request (see prepare).
  request& after(std::uint32_t index, std::uint32_t sequence) {
    fences_.emplace_back(index, sequence);
    return *this;
  }
  /// Recorded by none of the objects it names, so that later frames of other connections are
  /// not fenced behind it (a stripe's piece: the transfer's last frame, fenced behind every
  /// stripe, is recorded instead).
  request& unrecorded() {
    unrecorded_ = true;
    return *this;
  }
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
  cl_int send(server_connection& server, cl_int when_lost = CL_DEVICE_NOT_AVAILABLE);
  /// Sends a read the server answers once it completes, without waiting: its bytes land as
  /// `landing` says when a thread next needs them (server_connection::settle_reads).
  cl_int send_read(server_connection& server, pending_read landing, cl_int when_lost);
  /// Sends and waits for the reply; returns its status.
  cl_int call(server_connection& server, reply& answer, cl_int when_lost = CL_DEVICE_NOT_AVAILABLE);
  /// Like call(), but a successful reply's bulk bytes go straight to `bulk` (`size` bytes).
  cl_int call_into(server_connection& server, reply& answer, void* bulk, std::size_t size,
                   cl_int when_lost = CL_OUT_OF_RESOURCES);
  /// True when every object named so far lives on `server`: another server's ids name other
  /// objects there, or none.
  [[nodiscard]] bool names_only(const server_connection& server) const {
    for (const remote_object* named : named_) {
      if (named->server != &server) return false;
    }
    return true;
  }
  /// After call(): the deferred failure of earlier pipelined frames on this connection, if
  /// the call itself succeeded (for calls that synchronize: finish, wait, blocking transfers).
  cl_int with_deferred(server_connection& server, cl_int status);

  writer fields;
  /// The command's place in the order of issue (put_command sets it; 0 for other requests).
  std::uint64_t issue = 0;

 private:
  connection& prepare(server_connection& server);
  /// Sends the frame with `flags` (the caller holds link.mutex); stamps the objects it names.
  void transmit(connection& link, std::uint16_t flags);
  [[nodiscard]] cl_int check_size() const;
  opcode op_;
  std::vector<const remote_object*> named_;
  connection* link_ = nullptr;                                   // see on()
  bool unrecorded_ = false;                                      // see unrecorded()
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fences_;  // see after()
};

}  // namespace troupe::remote::icd
