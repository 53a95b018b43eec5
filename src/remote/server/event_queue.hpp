// The queue an event's command was enqueued on, made to submit it.
#pragma once

#include <CL/cl.h>

namespace troupe::remote::server {

/// Flushes the queue of `event`'s command (none for a user event): a platform may hold an
/// unflushed command for good (NVIDIA does), and watching an event's status, or waiting for its
/// callback, flushes nothing. clWaitForEvents would.
inline void flush_queue_of(cl_event event) {
  cl_command_queue queue = nullptr;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, nullptr) == CL_SUCCESS &&
      queue != nullptr) {
    clFlush(queue);
  }
}

}  // namespace troupe::remote::server
