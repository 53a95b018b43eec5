// device_server::state: a connection served, from its handshake to its last request.
#include <CL/cl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "remote/protocol/tls_stream.hpp"
#include "remote/server/call.hpp"
#include "remote/server/completion_replies.hpp"
#include "remote/server/device_server_state.hpp"
#include "remote/server/handlers.hpp"

namespace troupe::remote::server {

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

void send_status(stream_socket& socket, opcode op, std::uint32_t sequence, cl_int status,
                 const std::string& message) {
  writer reply;
  reply.put<std::int32_t>(status).put<std::int32_t>(CL_SUCCESS).put_string(message);
  socket.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(op) |
                                        static_cast<std::uint16_t>(opcode::reply)),
                    0, sequence, reply);
}

}  // namespace

// -- device_server::state: handshakes -----------------------------------------

void device_server::state::serve(stream_socket& socket) {
  const std::string peer = peer_address(socket.fd());
  try {
    secure(socket, peer);
    std::vector<std::byte> payload;
    // Nothing is trusted before the handshake: its frame is small, read whole, and must be
    // whole before the deadline admit() set, however slowly its bytes come.
    frame_header header = socket.receive_frame(payload, max_handshake_payload);
    socket.set_deadline({});
    {
      std::lock_guard lock(mutex_);
      std::erase(handshaking_, &socket);
    }
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
    check_token(socket, op, header.sequence, token, peer);
    if (op == opcode::hello) {
      in.expect_end();
      open_session(socket, header);
      return;
    }
    join_session(socket, header, in);
  } catch (const refusal& refused) {
    log(refused.throttle, log_level::warn,
        "refused a connection from " + peer + ": " + refused.what());
  } catch (const deadline_passed&) {
    log(refusals_, log_level::warn,
        "closed a connection from " + peer + ": no whole handshake within " +
            std::to_string(options_.handshake_timeout.count()) + " ms (--handshake-timeout-ms)");
  } catch (const decode_error& error) {
    log(log_level::warn, "closing a connection from " + peer + ": " + error.what());
  } catch (const connection_lost& lost) {
    log(log_level::debug, std::string("connection closed: ") + lost.what());
  } catch (const std::exception& error) {
    log(log_level::error, std::string("closing a connection after: ") + error.what());
  }
}

// Before the protocol's handshake: TLS's, on a server with a certificate. The first bytes tell
// a TLS client from a plain one, so that either mistake is named on both sides.
void device_server::state::secure(stream_socket& socket, const std::string& peer) {
  const bool tls = tls_stream::starts_with_handshake(socket.fd(), socket.deadline());
  if (tls_ == nullptr) {
    if (!tls) return;
    throw refusal(
        "not a plain connection: it starts a TLS handshake, and this server has no "
        "--tls-cert",
        refusals_);
  }
  if (!tls) {
    // A plain client: its handshake frame is read, within the deadline, and answered in
    // plain text, which it can read.
    std::vector<std::byte> payload;
    frame_header header = socket.receive_frame(payload, max_handshake_payload);
    auto op = static_cast<opcode>(header.opcode);
    if (op == opcode::hello || op == opcode::attach) {
      send_status(socket, op, header.sequence, CL_INVALID_OPERATION,
                  "this server takes TLS connections only (troupe-deviced --tls-cert): give its "
                  "hostfile line tls-ca=FILE or tls-pin=sha256:HEX");
    }
    throw refusal("not TLS: a plain connection to a server with --tls-cert", refusals_);
  }
  try {
    socket.secure(tls_stream::accept(socket.fd(), *tls_, socket.deadline()));
  } catch (const deadline_passed&) {
    throw;
  } catch (const connection_lost& failed) {
    throw refusal(failed.what(), refusals_);
  }
  log(log_level::debug, "TLS handshake with " + peer + " done");
}

// Refuses a wrong token, and any token from an address slowed down for presenting wrong ones.
void device_server::state::check_token(stream_socket& socket, opcode op, std::uint32_t sequence,
                                       const std::string& token, const std::string& peer) {
  if (options_.token.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  if (auto left = token_failures_.refused_for(peer, now); left.count() > 0) {
    const std::string why =
        "too many wrong tokens from " + peer + "; refused for another " +
        std::to_string(std::chrono::ceil<std::chrono::milliseconds>(left).count()) + " ms";
    send_status(socket, op, sequence, CL_INVALID_OPERATION, why);
    throw refusal(why, refusals_);
  }
  if (!same_token(options_.token, token)) {
    token_failures_.failed(peer, now);
    send_status(socket, op, sequence, CL_INVALID_OPERATION, "wrong token");
    throw refusal("wrong token", refusals_);
  }
  token_failures_.succeeded(peer);
}

// A hello: a new session, whose first connection this one is.
void device_server::state::open_session(stream_socket& socket, const frame_header& header) {
  std::shared_ptr<session> opened;
  {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= options_.max_clients) {
      const std::string why = "the server already serves its maximum of " +
                              std::to_string(options_.max_clients) + " clients (--max-clients)";
      send_status(socket, opcode::hello, header.sequence, CL_OUT_OF_RESOURCES, why);
      throw refusal(why, refusals_);
    }
    std::random_device random;
    std::array<std::uint64_t, 2> key{};
    for (auto& word : key) word = (std::uint64_t{random()} << 32) ^ random();
    opened = std::make_shared<session>(
        next_session_++, key, &socket, options_,
        [this](const std::string& reason) { log(log_level::warn, reason); });
    sessions_[opened->id()] = {opened, &socket, {}};
  }
  serve_anchor(socket, opened);
}

// An attach: one more request connection of an open session.
void device_server::state::join_session(stream_socket& socket, const frame_header& header,
                                        reader& in) {
  auto session_id = in.get<std::uint64_t>();
  std::array<std::uint64_t, 2> key{in.get<std::uint64_t>(), in.get<std::uint64_t>()};
  in.expect_end();
  activity done;
  std::shared_ptr<session> joined;
  bool full = false;
  {
    std::lock_guard lock(mutex_);
    auto found = sessions_.find(session_id);
    if (found != sessions_.end() && found->second.opened->key() == key) {
      full = found->second.connections.size() >= options_.max_session_connections;
      if (!full) {
        joined = found->second.opened;
        found->second.connections.push_back({&socket, &done});
      }
    }
  }
  if (full) {
    const std::string why = "session " + std::to_string(session_id) +
                            " already has its maximum of " +
                            std::to_string(options_.max_session_connections) +
                            " request connections (--max-session-connections)";
    send_status(socket, opcode::attach, header.sequence, CL_OUT_OF_RESOURCES, why);
    throw refusal(why, refusals_);
  }
  if (!joined) {
    send_status(socket, opcode::attach, header.sequence, CL_INVALID_OPERATION,
                "no open session " + std::to_string(session_id) + " with that key");
    throw decode_error("attach to an unknown session");
  }
  // Off the session's list when this ends, before `done` goes.
  struct leaving {
    state& server;
    stream_socket* gone;
    ~leaving() {
      std::lock_guard lock(server.mutex_);
      for (auto& [id, entry] : server.sessions_) {
        std::erase_if(entry.connections,
                      [&](const request_connection& link) { return link.socket == gone; });
      }
    }
  } leave{*this, &socket};
  std::uint32_t index = joined->add_connection();
  log(log_level::debug, "session " + std::to_string(session_id) + ": request connection " +
                            std::to_string(index) + " attached from " + peer_address(socket.fd()));
  writer welcome;
  welcome.put<std::int32_t>(CL_SUCCESS).put<std::int32_t>(CL_SUCCESS).put_string("");
  welcome.put<std::uint32_t>(index);
  try {
    // Inside the try: a client gone before its welcome must not leave the index registered.
    socket.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(opcode::attach) |
                                          static_cast<std::uint16_t>(opcode::reply)),
                      0, header.sequence, welcome);
    serve_requests(socket, joined, index, done);
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
  welcome.put_string(local_name_);  // where this host's clients may attach; empty: nowhere
  // The first connection carries notifications only; the session lives as long as it does.
  // The welcome is sent inside the try: a client gone before it arrives must still have its
  // session closed below, or the session would stay open (and count against max_clients).
  try {
    socket.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(opcode::hello) |
                                          static_cast<std::uint16_t>(opcode::reply)),
                      0, 0, welcome);
    // Heartbeats (a ping asking for a reply) are answered here, not by the session's request
    // connections: a connection busy with a long clFinish cannot answer, the session can.
    // They are no activity: a session that only answers heartbeats is idle.
    std::vector<std::byte> payload;
    frame_header header;
    while (true) {
      header = socket.receive_frame(payload, max_handshake_payload);
      if (header.opcode != static_cast<std::uint16_t>(opcode::ping) || header.flags != flag_reply ||
          !payload.empty()) {
        break;
      }
      writer alive;
      alive.put<std::int32_t>(CL_SUCCESS).put<std::int32_t>(CL_SUCCESS).put_string("");
      constexpr auto answer = static_cast<opcode>(static_cast<std::uint16_t>(opcode::ping) |
                                                  static_cast<std::uint16_t>(opcode::reply));
      if (!opened->notify(answer, alive)) throw connection_lost("cannot answer a heartbeat");
    }
    log(log_level::warn, "session " + std::to_string(opened->id()) + " sent opcode " +
                             std::to_string(header.opcode) + " with flags " +
                             std::to_string(header.flags) +
                             " on its notification connection, which takes only heartbeats "
                             "(ping with flag_reply, no payload); closing it");
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
    for (auto& connection : found->second.connections) connection.socket->shutdown();
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
                                          std::uint32_t index, activity& done) {
  socket.set_spin(std::chrono::microseconds(options_.spin_us));
  std::vector<std::byte> payload;
  cl_int deferred = CL_SUCCESS;
  std::mutex send_mutex;  // this thread's replies and those sent on completion
  completion_replies later(socket, send_mutex, *joined);
  // The watchdog asks `later` whether replies wait, until it goes.
  struct watched {
    state& server;
    activity& seen;
    watched(state& owner, activity& connection, completion_replies& replies)
        : server(owner), seen(connection) {
      std::lock_guard lock(server.mutex_);
      seen.replies = &replies;
    }
    ~watched() {
      std::lock_guard lock(server.mutex_);
      seen.replies = nullptr;
    }
  } watching{*this, done, later};
  // Frames started and finished, for the watchdog: odd while one is served.
  struct serving {
    activity& counted;
    explicit serving(activity& connection) : counted(connection) { counted.step(); }
    ~serving() { counted.step(); }
  };
  while (true) {
    frame_header header = socket.receive_frame(payload, max_frame_payload);
    serving in_progress(done);
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
