#pragma once

#include <thread>

namespace troupe::detail {

/// Names `thread` (at most 15 characters show), so that top -H, perf and gdb tell troupe's
/// threads apart. Does nothing where the platform has no thread names.
void name_thread(std::thread& thread, const char* name) noexcept;

}  // namespace troupe::detail
