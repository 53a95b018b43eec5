#include "remote/server/completion_replies.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "remote/server/event_queue.hpp"
#include "remote/server/session.hpp"

namespace troupe::remote::server {

namespace {

// OpenCL calls back with a number, not a pointer: the callback may come after the connection
// (and its completion_replies) is gone, or never (PoCL calls none for a failed command).
struct token_registry {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, completion_replies*> entries;
  std::uint64_t next = 1;
};
token_registry& tokens() {
  static token_registry registry;
  return registry;
}

void CL_CALLBACK on_complete(cl_event, cl_int, void* user_data) {
  auto& registry = tokens();
  std::lock_guard lock(registry.mutex);  // held while waking: the replies cannot go meanwhile
  auto found = registry.entries.find(reinterpret_cast<std::uintptr_t>(user_data));
  if (found == registry.entries.end()) return;
  found->second->wake();
  registry.entries.erase(found);
}

void forget_token(std::uint64_t token) {
  auto& registry = tokens();
  std::lock_guard lock(registry.mutex);
  registry.entries.erase(token);
}

cl_int execution_status(cl_event event) {
  cl_int status = CL_QUEUED;
  cl_int queried =
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  return queried == CL_SUCCESS ? status : queried;
}

// Without a callback the thread still notices: PoCL calls none for a failed command, and
// NVIDIA's come late after an asynchronous copy into pinned memory (an H100 run showed
// 64 MiB reads bimodal, 5.6 or about 14 ms, against a 10 ms poll). It polls soon after a
// reply was added or answered, then half as often each time nothing completed.
constexpr auto first_poll = std::chrono::microseconds(100);
constexpr auto longest_poll = std::chrono::microseconds(10'000);

}  // namespace

completion_replies::completion_replies(stream_socket& socket, std::mutex& send_mutex,
                                       session& owner)
    : socket_(socket), send_mutex_(send_mutex), owner_(owner) {}

completion_replies::~completion_replies() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& left : waiting_) {
    forget_token(left.token);
    owner_.hold_until_complete(left.event, std::move(left.data), std::move(left.charge));
    clReleaseEvent(left.event);
  }
}

void completion_replies::add(cl_event event, opcode op, std::uint32_t sequence,
                             std::vector<std::byte> fields, host_bytes data,
                             session_quota::charge charge) {
  std::uint64_t token = 0;
  {
    auto& registry = tokens();
    std::lock_guard lock(registry.mutex);
    token = registry.next++;
    registry.entries.emplace(token, this);
  }
  {
    // What may throw comes first: once the callback is set, the entry must be listed, or the
    // token would outlive this object with nothing to forget it.
    static_assert(std::is_nothrow_move_constructible_v<waiting>);
    std::lock_guard lock(mutex_);
    waiting_.reserve(waiting_.size() + 1);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  // Before the entry is listed: from then on the thread may send the reply and release the
  // event at any moment. An event already complete calls back at once, on this thread.
  if (clSetEventCallback(event, CL_COMPLETE, on_complete,
                         reinterpret_cast<void*>(static_cast<std::uintptr_t>(token))) !=
      CL_SUCCESS) {
    forget_token(token);  // the poll finds it instead
  }
  // The client waits for this reply, maybe before it sends anything that flushes.
  flush_queue_of(event);
  {
    std::lock_guard lock(mutex_);
    waiting_.push_back(  // within the capacity reserved above: moves only, which do not throw
        {event, op, sequence, std::move(fields), std::move(data), token, std::move(charge)});
  }
  wake();
}

void completion_replies::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  changed_.notify_all();
}

bool completion_replies::pending() {
  std::lock_guard lock(mutex_);
  return !waiting_.empty();
}

void completion_replies::run() {
  std::unique_lock lock(mutex_);
  auto poll = first_poll;
  while (true) {
    auto ready = [&] { return stopping_ || woken_; };
    if (waiting_.empty()) {
      changed_.wait(lock, ready);
      poll = first_poll;
    } else if (changed_.wait_for(lock, poll, ready)) {
      poll = first_poll;
    } else {
      poll = std::min(poll * 2, longest_poll);
    }
    if (stopping_) return;
    woken_ = false;
    // The events' status is asked without the lock: OpenCL's thread may hold a lock of its own
    // while it calls on_complete, which waits for this one in wake(). The events stay alive:
    // only this thread takes entries out.
    std::vector<cl_event> watched;
    for (const auto& entry : waiting_) watched.push_back(entry.event);
    lock.unlock();
    std::unordered_map<cl_event, cl_int> ended;
    for (cl_event event : watched) {
      cl_int status = execution_status(event);
      if (status <= CL_COMPLETE) ended.emplace(event, status);
    }
    lock.lock();
    std::vector<std::pair<waiting, cl_int>> over;
    std::erase_if(waiting_, [&](waiting& entry) {
      auto found = ended.find(entry.event);
      if (found == ended.end()) return false;
      over.emplace_back(std::move(entry), found->second);
      return true;
    });
    if (stopping_) {
      // Back for the destructor, which hands them to the session.
      for (auto& [entry, status] : over) waiting_.push_back(std::move(entry));
      return;
    }
    if (over.empty()) continue;
    poll = first_poll;
    lock.unlock();
    for (auto& [entry, status] : over) {
      forget_token(entry.token);
      // Given back before the reply: the client may ask for more as soon as it has it.
      entry.charge = {};
      send(entry, status);
      clReleaseEvent(entry.event);
    }
    // Outside the lock: a pinned buffer going back to a retired pool is unmapped, which waits
    // for the device, while OpenCL's callback thread may wait for this lock in wake().
    over.clear();
    lock.lock();
  }
}

void completion_replies::send(const waiting& over, cl_int status) {
  if (broken_) return;
  writer reply;
  if (status == CL_COMPLETE) {
    reply.put<std::int32_t>(CL_SUCCESS).put<std::int32_t>(CL_SUCCESS).put_string("");
    reply.put_raw(over.fields);
    reply.set_tail(over.data.data(), over.data.size());
  } else {
    reply.put<std::int32_t>(status).put<std::int32_t>(CL_SUCCESS);
    reply.put_string(std::string(to_string(over.op)) + " failed on the device (execution status " +
                     std::to_string(status) + ")");
  }
  try {
    std::lock_guard lock(send_mutex_);
    socket_.send_frame(static_cast<opcode>(static_cast<std::uint16_t>(over.op) |
                                           static_cast<std::uint16_t>(opcode::reply)),
                       0, over.sequence, reply);
  } catch (const std::exception&) {
    broken_ = true;  // the connection's own thread notices the loss and ends
  }
}

}  // namespace troupe::remote::server
