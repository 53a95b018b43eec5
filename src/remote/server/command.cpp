#include "remote/server/command.hpp"

#include <string>

namespace troupe::remote::server {

command::command(call& c)
    : call_(c), queue_(c.object<cl_command_queue>(object_kind::queue, CL_INVALID_COMMAND_QUEUE)) {
  auto wait_ids = c.in.get_array<std::uint64_t>(1 << 16);
  event_id_ = c.in.get<std::uint64_t>();
  // The event the client asked for counts against the object quota before anything runs: a
  // command refused after it was enqueued would still run.
  if (event_id_ != 0) {
    event_charge_ = c.owner.quota().take(quota_resource::objects, 1, "a command's event");
  }
  try {
    for (auto id : wait_ids) {
      wait_.push_back(c.object_by_id<cl_event>(id, object_kind::event, CL_INVALID_EVENT_WAIT_LIST));
      // PoCL never runs a command enqueued behind an event that has already failed, and a
      // clFinish or blocking transfer behind it then waits forever. Failed events are common
      // here (register_failed_event makes them), so such a command fails at once instead, as
      // OpenCL has blocking calls do.
      cl_int status = CL_COMPLETE;
      clGetEventInfo(wait_.back(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                     nullptr);
      if (status < 0) {
        throw cl_failure{CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                         "event " + std::to_string(id) + " of the wait list failed"};
      }
    }
  } catch (const cl_failure& failure) {
    register_failed_event(failure.code);
    throw;
  }
}

command::~command() {
  if (event_ != nullptr) clReleaseEvent(event_);
}

void command::finish(cl_int status, const char* what) {
  if (status == CL_SUCCESS) {
    if (event_id_ != 0) {
      clRetainEvent(event_);
      registered_ = true;
      call_.owner.add(event_id_, object_kind::event, event_, {}, std::move(event_charge_));
    }
    return;
  }
  throw cl_failure{status, what};
}

void command::register_failed_event(cl_int status) {
  if (event_id_ == 0 || registered_) return;
  registered_ = true;
  // The client already holds this event: make it a failed one, so that waiting on it or on
  // anything after it reports the failure instead of hanging.
  cl_context context = nullptr;
  clGetCommandQueueInfo(queue_, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
  cl_int created = CL_SUCCESS;
  cl_event failed = clCreateUserEvent(context, &created);
  if (created == CL_SUCCESS) {
    clSetUserEventStatus(failed, status < 0 ? status : CL_OUT_OF_RESOURCES);
    try {
      call_.owner.add(event_id_, object_kind::event, failed, {}, std::move(event_charge_));
    } catch (const cl_failure&) {
      // Past the object quota (the command's own failure, most likely): the id names nothing,
      // and waiting on it fails as on any unknown event instead of hanging.
    }
  }
}

void command::keep_until_complete(host_bytes&& bytes, session_quota::charge charge) {
  // Not by an event callback: PoCL calls none for a command that fails.
  if (bytes.size() != 0 && event_ != nullptr)
    call_.owner.hold_until_complete(event_, std::move(bytes), std::move(charge));
}

}  // namespace troupe::remote::server
