#include "device/copy_issuer.hpp"

#include <algorithm>

#include "troupe/support/thread_name.hpp"

namespace troupe::detail {

copy_issuer::copy_issuer(completion_queue& completions)
    : completions_(completions), thread_([this] { run(); }) {
  name_thread(thread_, "troupe-copies");
}

copy_issuer::~copy_issuer() {
  stop();
}

bool copy_issuer::issue_later(intrusive_ptr<queue_state> queue) {
  {
    std::lock_guard guard{mutex_};
    if (stopping_) return false;
    // A queue named already is issued once for all its commands.
    if (std::none_of(to_issue_.begin(), to_issue_.end(),
                     [&](const auto& named) { return named.get() == queue.get(); }))
      to_issue_.push_back(std::move(queue));
  }
  wake_.notify_one();
  return true;
}

void copy_issuer::stop() noexcept {
  {
    std::lock_guard guard{mutex_};
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void copy_issuer::run() {
  for (;;) {
    std::vector<intrusive_ptr<queue_state>> queues;
    {
      std::unique_lock lock{mutex_};
      wake_.wait(lock, [&] { return stopping_ || !to_issue_.empty(); });
      if (to_issue_.empty()) return;  // stopping, with nothing left
      queues.swap(to_issue_);
    }
    for (auto& queue : queues) queue->drain(queue_state::issuer::copy_thread, &completions_);
  }
}

}  // namespace troupe::detail
