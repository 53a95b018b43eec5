#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "backend.hpp"

namespace troupe::detail {

/// Turns finished device commands into satisfied futures, without ever blocking a scheduler
/// worker. One thread per actor system: it sleeps while nothing is in flight, and otherwise
/// either polls the events (spinning briefly, then backing off) or, in callback mode, waits for
/// the drivers to call back. bench/device/completion measures which is faster.
class completion_queue {
 public:
  enum class mode { polling, callback };

  explicit completion_queue(mode m);
  ~completion_queue();

  /// Watches `event`; calls finish() on it and complete() on `result` when it is done, or
  /// fail() when it failed.
  void watch(event_ptr event, intrusive_ptr<command_result> result);

  /// Blocks until everything watched so far is done, then ends the thread.
  void stop();

  mode completion_mode() const noexcept { return mode_; }

 private:
  struct entry {
    event_ptr event;
    intrusive_ptr<command_result> result;
  };

  void run();
  /// Finishes `e` if its command is done; true when it was.
  static bool try_finish(entry& e) noexcept;

  mode mode_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<entry> incoming_;
  std::atomic<bool> has_incoming_{false};  // lets the idle thread spin without the lock
  std::size_t signalled_ = 0;              // callback mode: driver callbacks not yet handled
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace troupe::detail
