// How troupe-deviced keeps troupe's own client driver out of its process.
#pragma once

namespace troupe::remote {

/// The environment variable a device server sets to its process id before it first calls
/// OpenCL. libtroupe-icd.so, loaded into that process by the ICD loader (a system-wide install
/// registers it there too), then lists no platforms and connects nowhere: a server never acts
/// as a client, so no server can wait on itself, directly or through servers that point back.
/// Child processes inherit the variable but not the process id, so they list platforms as usual.
inline constexpr const char* serving_process_variable = "TROUPE_ICD_SERVING_PROCESS";

}  // namespace troupe::remote
