// Large reads and writes of buffers striped over several connections of the session, so that
// the bytes of one transfer cross on as many TCP streams, threads and cores at both ends.
#pragma once

#include <CL/cl.h>

#include <cstddef>

namespace troupe::remote::icd {

/// How many connections a transfer of `size` bytes on `queue` would be striped over
/// (TROUPE_ICD_STREAMS; by default 4 over plain TCP, 8 over TLS, fewer on a small host); 1 when
/// it goes on the calling thread's connection alone.
std::size_t stripe_count(cl_command_queue queue, cl_mem buffer, std::size_t size,
                         cl_uint num_events, const cl_event* wait_list);

/// clEnqueueWriteBuffer over `stripes` connections (stripe_count), with OpenCL's meaning.
cl_int striped_write(cl_command_queue queue, cl_mem buffer, bool blocking, std::size_t offset,
                     std::size_t size, const void* host, cl_uint num_events,
                     const cl_event* wait_list, cl_event* event, std::size_t stripes);

/// A blocking clEnqueueReadBuffer over `stripes` connections (stripe_count).
cl_int striped_read(cl_command_queue queue, cl_mem buffer, std::size_t offset, std::size_t size,
                    void* host, cl_uint num_events, const cl_event* wait_list, cl_event* event,
                    std::size_t stripes);

}  // namespace troupe::remote::icd
