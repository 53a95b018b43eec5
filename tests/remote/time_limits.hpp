#pragma once

// Time limits: a call that hangs ends the test process, a condition polled until a deadline.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

namespace troupe::remote_test {

using namespace std::chrono_literals;

/// Runs `body` and returns its result; if it has not returned after `limit`, a watchdog ends
/// the process with a message: a hang becomes a clear failure. The body runs on the calling
/// thread, since the ICD's connections (and deferred errors) belong to threads.
template <class Body>
auto within(std::chrono::seconds limit, const char* what, Body body) {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, limit, [&] { return done; })) {
      std::fprintf(stderr, "FAILURE: %s did not return within %lld s; ending the test process\n",
                   what, static_cast<long long>(limit.count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  });
  auto result = body();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  changed.notify_all();
  watchdog.join();
  return result;
}

/// Polls `condition` until it holds or `limit` passes; returns whether it held.
inline bool eventually(std::chrono::milliseconds limit, const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

}  // namespace troupe::remote_test
