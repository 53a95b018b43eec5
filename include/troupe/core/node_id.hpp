#pragma once

#include <cstdint>

namespace troupe {

/// Names a node: one process of an MPI job (its rank), each running one actor system. A program
/// started without an MPI launcher is node 0 of a cluster of one.
using node_id = std::uint32_t;

}  // namespace troupe
