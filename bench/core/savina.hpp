// Savina-style actor benchmarks, one class per side with the same public interface: savina_troupe
// (savina_troupe.cpp) and savina_caf (savina_caf.cpp, the peer). The driver (savina.cpp) times each
// method and checks its result against the closed form given below.
//
// Rules both sides follow, so that the two measure the same work:
// - The constructor starts the actor system with `threads` worker threads; the destructor stops it.
//   Start-up is never timed.
// - Every actor a method creates has terminated before the method returns, so that one run never
//   overlaps the next.
// - Messages are sent with the cheapest asynchronous send of the library (no request/response
//   machinery unless a method says so); the calling thread takes part only where a method says.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>

namespace troupe::bench {

/// The fixed compute of one fork-join message (Savina: a sine, squared), the same on both sides.
/// It always returns true; returning the comparison keeps the compiler from dropping the work.
inline bool fork_join_work(int64_t message) {
  double angle = 37.2 + static_cast<double>(message % 8);
  double sine = std::sin(angle);
  return std::sqrt(sine * sine + 1.0) >= 1.0;
}

/// Deterministic pseudo-random numbers (splitmix64) for the targets of the big benchmark: actor
/// `index` draws from `pseudo_random{index}`, on both sides.
class pseudo_random {
 public:
  explicit pseudo_random(int64_t seed) : state_(static_cast<uint64_t>(seed)) {}

  /// The next number in [0, bound), bound > 0.
  int64_t below(int64_t bound) {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t mixed = state_;
    mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ULL;
    mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebULL;
    mixed ^= mixed >> 31;
    return static_cast<int64_t>(mixed % static_cast<uint64_t>(bound));
  }

  /// A pseudo-random actor index in [0, actors) other than `self` (actors >= 2).
  int64_t other(int64_t self, int64_t actors) {
    int64_t target = below(actors - 1);
    return target >= self ? target + 1 : target;
  }

 private:
  uint64_t state_;
};

// The two classes below must keep identical public interfaces; only the library differs.

/// The Savina benchmarks on troupe.
class savina_troupe {
 public:
  // -- constructors ---------------------------------------------------------

  /// Starts an actor system with `threads` worker threads.
  explicit savina_troupe(int threads);
  ~savina_troupe();
  savina_troupe(const savina_troupe&) = delete;
  savina_troupe& operator=(const savina_troupe&) = delete;

  // -- operations -----------------------------------------------------------

  /// Two actors, ping and pong, exchange `round_trips` round trips: ping sends, pong answers,
  /// ping sends the next one when the answer arrives. Returns the pongs ping received
  /// (== round_trips).
  int64_t ping_pong(int64_t round_trips);

  /// Fork-join throughput: the calling thread sends `actors * messages_per_actor` messages
  /// round-robin (message i to worker i % actors) to `actors` worker actors; each worker does
  /// fork_join_work on each message, counts it, and reports its count after its last one.
  /// Returns the total processed (== actors * messages_per_actor).
  int64_t fork_join(int64_t actors, int64_t messages_per_actor);

  /// A producer actor sends `n` increment messages to a counter actor, then asks it for the
  /// count (a message the counter answers after all increments). Returns the count (== n).
  int64_t counting(int64_t n);

  /// Savina big: `actors` actors (>= 2); each sends `pings_per_actor` pings, one at a time, to
  /// targets drawn with pseudo_random{index}.other(index, actors); every ping is answered with
  /// a pong, and a pong triggers the next ping. Actors stay alive to answer pings until all have
  /// received their pongs. Returns the total pongs (== actors * pings_per_actor).
  int64_t big(int64_t actors, int64_t pings_per_actor);

  /// The calling thread spawns `n` actors and sends each one message; each answers a collector
  /// actor and quits; the collector reports the number of answers. Returns it (== n).
  int64_t spawn_send(int64_t n);

  /// Skynet: a tree of actors with fan-out 10 over `leaves` leaves (a power of 10); leaf i sends
  /// i to its parent and quits; an inner actor spawns its 10 children, sums their 10 values,
  /// sends the sum to its parent and quits. Returns the root's sum (== leaves*(leaves-1)/2).
  int64_t skynet(int64_t leaves);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// The Savina benchmarks on the C++ Actor Framework (CAF 0.17), the peer troupe is measured
/// against.
class savina_caf {
 public:
  // -- constructors ---------------------------------------------------------

  /// Starts an actor system with `threads` worker threads.
  explicit savina_caf(int threads);
  ~savina_caf();
  savina_caf(const savina_caf&) = delete;
  savina_caf& operator=(const savina_caf&) = delete;

  // -- operations (see savina_troupe for what each one does) ------------------

  int64_t ping_pong(int64_t round_trips);
  int64_t fork_join(int64_t actors, int64_t messages_per_actor);
  int64_t counting(int64_t n);
  int64_t big(int64_t actors, int64_t pings_per_actor);
  int64_t spawn_send(int64_t n);
  int64_t skynet(int64_t leaves);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace troupe::bench
