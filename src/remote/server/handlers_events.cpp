// Events: user events, their status, callbacks, and waiting for events.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "remote/server/event_queue.hpp"
#include "remote/server/handlers.hpp"

namespace troupe::remote::server {

namespace {

void CL_CALLBACK forward_event_callback(cl_event, cl_int status, void* user_data) {
  auto [owner, callback_id] = take_event_callback(reinterpret_cast<std::uintptr_t>(user_data));
  if (owner) {
    writer notice;
    notice.put<std::uint64_t>(callback_id).put<std::int32_t>(status);
    owner->notify(opcode::event_callback, notice);
  }
}

// NVIDIA's clWaitForEvents returns milliseconds late after asynchronous copies from pinned
// memory, while the events' status is current: watch the status first, from 20 us, doubling up
// to 1 ms, until every event is over (complete or failed; a session that closes completes the
// user events it waits on). clWaitForEvents then returns at once.
void wait_by_polling(const std::vector<cl_event>& events) {
  for (cl_event event : events) flush_queue_of(event);  // as clWaitForEvents would
  auto pause = std::chrono::microseconds(20);
  for (std::size_t over = 0; over < events.size();) {
    cl_int status = CL_COMPLETE;
    if (clGetEventInfo(events[over], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                       nullptr) != CL_SUCCESS ||
        status <= CL_COMPLETE) {
      ++over;
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace

namespace handlers {

void create_user_event(call& c) {
  cl_int status = CL_SUCCESS;
  auto id = c.in.get<std::uint64_t>();
  auto context = c.object<cl_context>(object_kind::context, CL_INVALID_CONTEXT);
  cl_event event = clCreateUserEvent(context, &status);
  check(status, "clCreateUserEvent");
  c.owner.track_user_event(event);  // before add, which releases it if the id is refused
  c.owner.add(id, object_kind::event, event);
}

void set_user_event_status(call& c) {
  auto event = c.object<cl_event>(object_kind::event, CL_INVALID_EVENT);
  check(c.owner.set_user_event_status(event, c.in.get<std::int32_t>()), "clSetUserEventStatus");
}

void set_event_callback(call& c) {
  auto event = c.object<cl_event>(object_kind::event, CL_INVALID_EVENT);
  auto type = c.in.get<std::int32_t>();
  auto callback_id = c.in.get<std::uint64_t>();
  // A number for OpenCL, not memory: see register_event_callback.
  std::uint64_t token = register_event_callback(c.owner, callback_id);
  cl_int result = clSetEventCallback(event, type, forward_event_callback,
                                     reinterpret_cast<void*>(static_cast<std::uintptr_t>(token)));
  if (result != CL_SUCCESS) take_event_callback(token);
  check(result, "clSetEventCallback");
}

void wait_for_events(call& c) {
  auto events = c.objects<cl_event>(object_kind::event, CL_INVALID_EVENT);
  if (events.empty()) throw cl_failure{CL_INVALID_VALUE, "clWaitForEvents with no events"};
  wait_by_polling(events);
  check(clWaitForEvents(static_cast<cl_uint>(events.size()), events.data()), "clWaitForEvents");
  // NVIDIA returns success for events that ended in an error (a failed command's stand-in
  // user event, say); OpenCL says the wait must report it.
  for (cl_event event : events) {
    cl_int outcome = CL_COMPLETE;
    clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof outcome, &outcome, nullptr);
    if (outcome < 0) {
      throw cl_failure{CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                       "an event waited for ended with error " + std::to_string(outcome)};
    }
  }
}

}  // namespace handlers

}  // namespace troupe::remote::server
