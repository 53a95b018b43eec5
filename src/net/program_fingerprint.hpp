#pragma once

#include <cstdint>

namespace troupe::net::detail {

/// Names the program this process runs: its GNU build id, or a hash of the executable where it
/// has none. Nodes of one job must run the same program, for message types are known by their
/// C++ names.
std::uint64_t program_fingerprint();

}  // namespace troupe::net::detail
