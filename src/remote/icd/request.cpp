#include "remote/icd/request.hpp"

#include <string>
#include <utility>

namespace troupe::remote::icd {

cl_int request::check_size() const {
  // Refused here, before sending: a frame over the limit would cost the whole connection.
  if (fields.size() <= max_frame_payload) return CL_SUCCESS;
  warn(std::string(to_string(op_)) + " of " + std::to_string(fields.size()) +
       " bytes is over the protocol's frame limit of " + std::to_string(max_frame_payload));
  return CL_OUT_OF_RESOURCES;
}

request& request::object(const remote_object* named) {
  fields.put<std::uint64_t>(named != nullptr ? named->id : 0);
  if (named != nullptr) named_.push_back(named);
  return *this;
}

connection& request::prepare(server_connection& server) {
  connection& link = link_ != nullptr ? *link_ : server.this_thread_connection();
  // The frame fenced on may still be held back on its connection: it is sent first.
  auto fence_on = [&](std::uint32_t index, std::uint32_t sequence) {
    server.release_held(index);
    writer fence;
    fence.put<std::uint32_t>(index).put<std::uint32_t>(sequence);
    std::lock_guard lock(link.mutex);
    stream_socket::append_frame(link.held, opcode::fence, 0, ++link.sequence, fence);
    link.holding.store(true, std::memory_order_release);
  };
  // Fence behind pipelined frames of other connections that named the same objects.
  for (const remote_object* named : named_) {
    std::uint64_t last = named->last_frame.load(std::memory_order_acquire);
    auto index = static_cast<std::uint32_t>(last >> 32);
    if (last == 0 || index == link.index) continue;
    fence_on(index, static_cast<std::uint32_t>(last));
  }
  for (auto [index, sequence] : fences_) {
    if (index != link.index) fence_on(index, sequence);
  }
  return link;
}

void request::transmit(connection& link, std::uint16_t flags) {
  if (op_ == opcode::set_kernel_arg && flags == 0) {
    // Held back: an argument does nothing until its launch, which sends it along.
    stream_socket::append_frame(link.held, op_, 0, ++link.sequence, fields);
    link.holding.store(true, std::memory_order_release);
  } else {
    link.socket.send_frame(op_, flags, ++link.sequence, fields, link.held);
    link.held.clear();
    link.holding.store(false, std::memory_order_release);
  }
  if (unrecorded_) return;
  if ((flags & flag_reply) != 0 && (flags & flag_reply_on_completion) == 0) return;
  std::uint64_t stamp = (std::uint64_t{link.index} << 32) | link.sequence;
  for (const remote_object* named : named_) {
    const_cast<remote_object*>(named)->last_frame.store(stamp, std::memory_order_release);
  }
}

cl_int request::send(server_connection& server, cl_int when_lost) {
  if (server.lost()) return when_lost;
  if (cl_int status = check_size(); status != CL_SUCCESS) return status;
  try {
    connection& link = prepare(server);
    std::lock_guard lock(link.mutex);
    transmit(link, 0);
    return CL_SUCCESS;
  } catch (const connection_refused& refusal) {
    warn(std::string(to_string(op_)) + " failed: " + refusal.what());
    return CL_OUT_OF_RESOURCES;
  } catch (const std::exception& error) {
    server.mark_lost(error.what());
    return when_lost;
  }
}

cl_int request::send_read(server_connection& server, pending_read landing, cl_int when_lost) {
  if (server.lost()) return when_lost;
  if (cl_int status = check_size(); status != CL_SUCCESS) return status;
  try {
    connection& link = prepare(server);
    std::lock_guard lock(link.mutex);
    landing.link = &link;
    landing.op = op_;
    landing.sequence = link.sequence + 1;
    {
      // Registered before it is sent: another thread may take its reply at once.
      std::lock_guard replies(server.replies_mutex_);
      server.pending_reads_.emplace(std::pair{landing.link, landing.sequence}, std::move(landing));
    }
    transmit(link, flag_reply | flag_reply_on_completion);
    return CL_SUCCESS;
  } catch (const connection_refused& refusal) {
    warn(std::string(to_string(op_)) + " failed: " + refusal.what());
    return CL_OUT_OF_RESOURCES;
  } catch (const std::exception& error) {
    server.mark_lost(error.what());
    return when_lost;
  }
}

cl_int request::call_into(server_connection& server, reply& answer, void* bulk, std::size_t size,
                          cl_int when_lost) {
  if (server.lost()) return when_lost;
  if (cl_int status = check_size(); status != CL_SUCCESS) return status;
  try {
    connection& link = prepare(server);
    std::lock_guard turn(link.calling);
    {
      std::lock_guard lock(link.mutex);
      {
        std::lock_guard replies(server.replies_mutex_);
        link.awaited = {link.sequence + 1, op_, &answer, bulk, size, false};
      }
      transmit(link, flag_reply);
    }
    std::unique_lock replies(server.replies_mutex_);
    server.take_replies(link, replies, [&] { return link.awaited.done; });
    if (!link.awaited.done) throw connection_lost("no reply to " + std::string(to_string(op_)));
    if (answer.status != CL_SUCCESS) {
      debug(std::string(to_string(op_)) + " failed: " + answer.message);
    }
    return answer.status;
  } catch (const connection_refused& refusal) {
    warn(std::string(to_string(op_)) + " failed: " + refusal.what());
    return CL_OUT_OF_RESOURCES;
  } catch (const std::exception& error) {
    server.mark_lost(error.what());
    return when_lost;
  }
}

cl_int request::call(server_connection& server, reply& answer, cl_int when_lost) {
  return call_into(server, answer, nullptr, 0, when_lost);
}

cl_int request::with_deferred(server_connection& server, cl_int status) {
  if (server.lost()) return status;
  connection* link = link_ != nullptr ? link_ : server.this_thread_connection_if_any();
  if (link == nullptr) return status;
  cl_int deferred = link->deferred.exchange(CL_SUCCESS);
  return status != CL_SUCCESS ? status : deferred;
}

}  // namespace troupe::remote::icd
