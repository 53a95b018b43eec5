// New memory objects are zeroed before a client can read them: device memory a session freed
// must not reach the next session that allocates (OpenCL leaves new memory undefined).
#pragma once

#include <CL/cl.h>

#include "remote/server/session.hpp"

namespace troupe::remote::server {

/// Fills the new buffer or image `mem` of `context` (a context's object) with zeros, on the
/// server's own queue of that context (made at the first call), and waits until it is done.
/// On failure releases `mem` and throws cl_failure.
void zero_fill(cl_object& context, cl_mem mem);

}  // namespace troupe::remote::server
