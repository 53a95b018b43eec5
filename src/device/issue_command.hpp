#pragma once

#include "device/backend.hpp"
#include "troupe/device/detail/command.hpp"
#include "troupe/device/detail/device_state.hpp"

namespace troupe::detail {

/// Checks `cmd` against `device` (buffers and programs on this device, kernel arguments that
/// match the kernel's parameters) and enqueues it on `queue` after `wait`. Returns its event,
/// or null when there is nothing to do (an empty range) or a launch goes without an event
/// (`marking`, which only launches heed). Throws troupe::error naming the problem.
event_ptr issue_command(device_state& device, backend_queue& queue, command& cmd, wait_list wait,
                        launch_event marking);

}  // namespace troupe::detail
