// The cost of future composition, one class per side with the same public interface:
// futures_troupe (futures_troupe.cpp) and futures_boost (futures_boost.cpp, the peer: Boost.Thread
// futures). The driver (futures.cpp) times each method and checks its result against the closed
// form given below.
//
// Rules both sides follow, so that the two measure the same work:
// - The constructor starts the thread pool (`threads` threads) that then_chain_pool uses; the
//   destructor stops it. Start-up is never timed.
// - Everything a method starts has finished before it returns.
#pragma once

#include <cstdint>
#include <memory>

namespace troupe::bench {

// The two classes below must keep identical public interfaces; only the library differs.

/// Future composition on troupe's async layer.
class futures_troupe {
 public:
  // -- constructors ---------------------------------------------------------

  /// Starts a thread pool of `threads` threads.
  explicit futures_troupe(int threads);
  ~futures_troupe();
  futures_troupe(const futures_troupe&) = delete;
  futures_troupe& operator=(const futures_troupe&) = delete;

  // -- operations -----------------------------------------------------------

  /// Makes a promise, attaches `length` continuations one after the other (each adds 1 to the
  /// value and runs inline, on the thread that completes its predecessor), then sets the promise
  /// to 0 and waits for the last future. Returns its value (== length).
  int64_t then_chain_inline(int64_t length);

  /// As then_chain_inline, but every continuation runs on the thread pool.
  int64_t then_chain_pool(int64_t length);

  /// Makes `n` promises and their futures, calls when_all over all the futures, then sets
  /// promise i to i from the calling thread, waits for the combined future and sums the values.
  /// Returns the sum (== n*(n-1)/2).
  int64_t when_all_sum(int64_t n);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// Future composition on Boost.Thread futures (boost::future, then, when_all, basic_thread_pool),
/// the peer troupe is measured against.
class futures_boost {
 public:
  // -- constructors ---------------------------------------------------------

  /// Starts a thread pool of `threads` threads.
  explicit futures_boost(int threads);
  ~futures_boost();
  futures_boost(const futures_boost&) = delete;
  futures_boost& operator=(const futures_boost&) = delete;

  // -- operations (see futures_troupe for what each one does) -----------------

  int64_t then_chain_inline(int64_t length);
  int64_t then_chain_pool(int64_t length);
  int64_t when_all_sum(int64_t n);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace troupe::bench
