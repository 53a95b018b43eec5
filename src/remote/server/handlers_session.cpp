// Requests about the session itself: round trips, fences between its connections, and
// releasing the client's ids.
#include "remote/server/handlers.hpp"

namespace troupe::remote::server::handlers {

void ping(call&) {}

void fence(call& c) {
  auto index = c.in.get<std::uint32_t>();
  auto sequence = c.in.get<std::uint32_t>();
  // A connection's earlier frames are already processed, and its later ones never would be
  // while this one waits: a fence on itself is a no-op, not a wait until the session ends.
  if (index != c.connection) c.owner.fence(index, sequence);
}

void release(call& c) {
  c.owner.release(c.in.get<std::uint64_t>());
}

}  // namespace troupe::remote::server::handlers
