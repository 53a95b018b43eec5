// The CAF 0.17 side of bench-net: remote actors over CAF's own TCP transport (libcaf_io), as a
// CAF user writes them. Kept behind this interface so that CAF's headers stay in one file.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace troupe::bench {

class net_caf {
 public:
  /// Ports on loopback where the serving node published its actors.
  struct ports {
    std::uint16_t echo = 0;
    std::uint16_t sink = 0;
  };

  /// A CAF actor system with `threads` workers and the middleman loaded.
  explicit net_caf(int threads);
  ~net_caf();

  /// The serving node: spawns an echo and a sink and publishes them on loopback.
  ports publish();

  /// The driving node: connects to what the serving node published.
  void connect(const ports& where);

  /// Request/response round trips of `payload` between a local actor and the remote echo;
  /// returns how many came back equal.
  std::int64_t round_trips(const std::vector<char>& payload, std::int64_t count);

  /// Sends `count` 8-byte messages to the remote sink; returns how many it counted.
  std::int64_t stream(std::int64_t count);

  /// Sends `messages` (moved) to the remote sink; returns the bytes it counted.
  std::int64_t bandwidth(std::vector<std::vector<char>> messages);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace troupe::bench
