#pragma once

#include <cstdint>

/// Timestamps along a request's path through a kernel actor, to see where a pipeline stage's
/// time goes (bench-kernel --trace). They are compiled in only with the CMake option
/// TROUPE_STAGE_TRACE, a diagnostic build; otherwise record() is empty and costs nothing.
namespace troupe::detail::stage_trace {

/// The points, in the order one stage passes them, then those of the completion thread.
/// write() puts their names into each trace, for bench/kernel/stage_trace.py.
enum class point : std::uint16_t {
  message_taken = 1,   // an actor starts on a message
  request_run,         // a kernel actor starts on a request
  launch_called,       // its arguments are ready; the launch is submitted
  command_submitted,   // the queue takes the command
  command_issuing,     // the queue issues it
  driver_call,         // the backend calls the driver's launch
  driver_flush,        // OpenCL: the launch is enqueued; the flush follows
  command_enqueued,    // the driver's calls returned
  responding,          // the kernel actor responds
  responded,           // the response is on its way
  message_done,        // the actor is done with the message
  waiter_done,         // the thread that waited for the pipeline has its result
  chunk_arrived,       // the completion thread copies a staged read's chunk out of its block
  chunk_copied,        // and is done with it
  command_done,        // the completion thread sees a command's event complete
  command_completing,  // its host work is done (the rest of a staged read copied out)
  command_completed,   // its future and what waited on it were told
  run_begin = 100,     // a timed run begins: run_begin + stages
};

#ifdef TROUPE_STAGE_TRACE
inline constexpr bool enabled = true;
/// Records `p` with the time and the calling thread (lock-free; the first 2^21 records).
void record(point p, unsigned extra = 0) noexcept;
/// Writes to `path` a "# point N name" line per point, then the records, one "point thread
/// nanoseconds" line each; throws std::runtime_error if it cannot.
void write(const char* path);
#else
inline constexpr bool enabled = false;
inline void record(point, unsigned = 0) noexcept {}
inline void write(const char*) {}
#endif

}  // namespace troupe::detail::stage_trace
