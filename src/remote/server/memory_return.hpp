// Memory freed when clients go is handed back to the system: glibc keeps freed blocks in its
// arenas (up to 64 MiB each past its adaptive thresholds), so without this a server grows with
// the clients it has had. Handing it back on every free would fault every large transfer's
// buffer in again; it is done on the watchdog's ticks after a session or connection went.
#pragma once

#include <chrono>

namespace troupe::remote::server {

/// A session or connection went, with what it held: the next ticks hand memory back.
void note_memory_freed();

/// Called on the watchdog's ticks: hands the allocator's free memory back to the system
/// (malloc_trim, at most twice a second) while the last note is under `settle` old. Several
/// ticks, not one: the OpenCL
/// platform frees some memory late, on threads of its own (PoCL: buffers whose last command
/// finishes after the session released them).
void return_freed_memory(std::chrono::milliseconds settle = std::chrono::seconds(3));

}  // namespace troupe::remote::server
