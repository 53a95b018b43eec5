#pragma once

// The thread of one device that issues the commands its driver may block in.

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "troupe/device/detail/queue_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class completion_queue;

/// Issues the commands that the driver may return from only once the device has run them
/// (backend_queue::may_block_in: NVIDIA's OpenCL reads), and, on their queues, those behind
/// them. A scheduler worker that submits such a command, or finds its queue being issued, hands
/// the queue on here and goes on, and so does the completion thread, which must go on polling.
/// One per device of an actor system, started on first use and ended with the system
/// (device_state::close).
class copy_issuer {
 public:
  // -- constructors --------------------------------------------------------

  /// `completions`: the system's completion queue, which outlives stop(); the commands issued
  /// here are watched there.
  explicit copy_issuer(completion_queue& completions);
  ~copy_issuer();
  copy_issuer(const copy_issuer&) = delete;
  copy_issuer& operator=(const copy_issuer&) = delete;

  // -- operations ----------------------------------------------------------

  /// Issues the ready commands of `queue` on this thread, soon. False once stopped: the caller
  /// issues them itself (the system is gone, so they fail at once with errc::system_gone).
  bool issue_later(intrusive_ptr<queue_state> queue);

  /// Issues what issue_later() was told of, then ends the thread.
  void stop() noexcept;

 private:
  void run();

  completion_queue& completions_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<intrusive_ptr<queue_state>> to_issue_;  // guarded by mutex_
  bool stopping_ = false;                             // guarded by mutex_
  std::thread thread_;
};

}  // namespace troupe::detail
