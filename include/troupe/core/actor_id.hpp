#pragma once

#include <cstdint>

namespace troupe {

/// Names an actor within its actor system (the first gets 1); 0 names none.
using actor_id = std::uint64_t;

}  // namespace troupe
