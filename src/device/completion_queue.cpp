#include "device/completion_queue.hpp"

#include <algorithm>
#include <chrono>

#include "device/device_waits.hpp"
#include "troupe/support/stage_trace.hpp"
#include "troupe/support/thread_name.hpp"

namespace troupe::detail {

completion_queue::completion_queue(mode m, executor& results)
    : mode_(m),
      results_(results),
      callbacks_(std::make_shared<callback_target>()),
      thread_([this] { run(); }) {
  callbacks_->queue = this;
  name_thread(thread_, "troupe-complete");
}

completion_queue::~completion_queue() {
  stop();
  // Waits for a callback that is signalling right now; later ones find no queue.
  std::lock_guard guard{callbacks_->mutex};
  callbacks_->queue = nullptr;
}

void completion_queue::signal() {
  {
    std::lock_guard guard{mutex_};
    ++signalled_;
  }
  wake_.notify_one();
}

void completion_queue::wake_for_retired() noexcept {
  bool wake = false;
  {
    std::lock_guard guard{mutex_};
    wake = sleeps_untimed_;
  }
  if (wake) wake_.notify_one();
}

void completion_queue::watch(event_ptr event, intrusive_ptr<command_result> result) {
  if (mode_ == mode::callback) {
    // The driver's thread only counts and wakes; query/finish/complete run on our thread, where
    // calling the driver is allowed.
    event->notify([target = callbacks_] {
      std::lock_guard guard{target->mutex};
      if (target->queue != nullptr) target->queue->signal();
    });
  }
  {
    std::lock_guard guard{mutex_};
    incoming_.push_back({std::move(event), std::move(result)});
    has_incoming_.store(true, std::memory_order_release);
  }
  wake_.notify_one();
}

void completion_queue::cover_later(intrusive_ptr<queue_state> queue) {
  const auto due = std::chrono::steady_clock::now() + cover_delay;
  bool wake = false;
  {
    std::lock_guard guard{mutex_};
    if (to_cover_.empty())
      next_due_.store(due.time_since_epoch().count(), std::memory_order_relaxed);
    to_cover_.push_back({std::move(queue), due});
    wake = sleeps_untimed_;
  }
  // Otherwise the thread is awake, naps at most 50 us, or sleeps until an earlier cover is due:
  // it sees the new one by itself, and the launching thread saves a wake-up's system call.
  if (wake) wake_.notify_one();
}

void completion_queue::issue_later(intrusive_ptr<queue_state> queue) {
  bool wake = false;
  {
    std::lock_guard guard{mutex_};
    // A queue named already is drained once for all its launches.
    const bool named = std::any_of(to_issue_.begin(), to_issue_.end(),
                                   [&](const auto& q) { return q.get() == queue.get(); });
    if (!named) to_issue_.push_back(std::move(queue));
    has_to_issue_.store(true, std::memory_order_release);
    wake = sleeps_untimed_ || naps_;
  }
  if (wake) wake_.notify_one();
}

void completion_queue::cover_at(std::vector<to_cover> later) {
  for (auto& cover : later) {
    auto after = std::upper_bound(to_cover_.begin(), to_cover_.end(), cover.due,
                                  [](auto due, const to_cover& c) { return due < c.due; });
    to_cover_.insert(after, std::move(cover));
  }
  next_due_.store(to_cover_.front().due.time_since_epoch().count(), std::memory_order_relaxed);
}

std::vector<intrusive_ptr<queue_state>> completion_queue::take_due(
    std::chrono::steady_clock::time_point now) {
  std::vector<intrusive_ptr<queue_state>> due;
  while (!to_cover_.empty() && (stopping_ || to_cover_.front().due <= now)) {
    due.push_back(std::move(to_cover_.front().queue));
    to_cover_.pop_front();
  }
  const auto next =
      to_cover_.empty() ? std::chrono::steady_clock::time_point::max() : to_cover_.front().due;
  next_due_.store(next.time_since_epoch().count(), std::memory_order_relaxed);
  return due;
}

void completion_queue::stop() {
  {
    std::lock_guard guard{mutex_};
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  retired_->close();
}

bool completion_queue::try_finish(entry& e) noexcept {
  try {
    if (!e.event->query()) return false;
    stage_trace::record(stage_trace::point::command_done);
    e.event->finish();
  } catch (...) {
    e.result->fail(std::current_exception());
    return true;
  }
  stage_trace::record(stage_trace::point::command_completing);
  e.result->complete();
  stage_trace::record(stage_trace::point::command_completed);
  return true;
}

void completion_queue::run() {
  on_completion_thread() = true;
  std::vector<entry> pending;
  auto last_progress = std::chrono::steady_clock::now();
  for (;;) {
    release_retired(pending.empty());
    if (pending.empty() && mode_ == mode::polling) spin_while_idle();
    // A polling pass with commands in flight, none new and no cover due takes no lock: a lock
    // taken on every pass would contend with the threads that submit commands.
    const bool polling_only = mode_ == mode::polling && !pending.empty() && !has_news() &&
                              !cover_due(std::chrono::steady_clock::now());
    taken work;
    if (!polling_only && !take_news(pending, last_progress, work)) return;
    // Before the covers, so that a cover due comes after the launches handed on. Issuing takes
    // the lock (cover_later, watch): outside it.
    for (auto& queue : work.to_issue) queue->drain(queue_state::issuer::completion, this);
    // Outside the lock: covering enqueues a marker and watches it, which takes the lock. The
    // markers are seen on the next pass. A queue still busy is looked at again later.
    if (!work.due.empty()) cover_queues(work.due, work.stopping);
    const bool progress = finish_done(pending);
    if (mode_ == mode::callback || pending.empty()) continue;
    pause_between_polls(progress, last_progress);
  }
}

void completion_queue::release_retired(bool idle) {
  // Dropped while quiet, so that no launch, on this thread or another, waits behind a release
  // in the driver; next_due_ is max while no queue has launches to cover.
  if (const auto retired = retired_->waiting(); retired != 0) {
    const bool quiet = idle && !has_news() &&
                       next_due_.load(std::memory_order_relaxed) ==
                           std::chrono::steady_clock::time_point::max().time_since_epoch().count();
    if (quiet || retired >= most_retired) retired_->release_all();
  }
}

void completion_queue::spin_while_idle() const {
  using namespace std::chrono;
  // Idle: stay awake a little, since commands tend to come in runs; a command that arrives now
  // is seen without a wake-up.
  auto until = steady_clock::now() + microseconds(50);
  for (auto now = steady_clock::now(); !has_news() && now < until && !cover_due(now);
       now = steady_clock::now())
    std::this_thread::yield();
}

template <class News>
void completion_queue::sleep_until_news(std::unique_lock<std::mutex>& lock, News news) {
  if (to_cover_.empty()) {
    sleeps_untimed_ = true;
    wake_.wait(lock, [&] { return news() || !to_cover_.empty(); });
    sleeps_untimed_ = false;
  } else if (mode_ == mode::callback) {
    wake_.wait_until(lock, to_cover_.front().due, news);
  }
}

bool completion_queue::take_news(std::vector<entry>& pending,
                                 std::chrono::steady_clock::time_point& last_progress,
                                 taken& work) {
  using namespace std::chrono;
  std::unique_lock lock{mutex_};
  // Sleeps until there is news, or the first cover is due (cover_later() may bring one).
  // Polling, a launch without an event is in flight as any command is: the thread stays awake,
  // so that the marker someone asks for soon is seen at once.
  if (pending.empty() && incoming_.empty() && to_issue_.empty()) {
    if (stopping_ && to_cover_.empty()) return false;
    sleep_until_news(lock, [&] {
      return stopping_ || !incoming_.empty() || !to_issue_.empty() || retired_->waiting() != 0;
    });
    last_progress = steady_clock::now();
  } else if (mode_ == mode::callback && signalled_ == 0 && incoming_.empty()) {
    sleep_until_news(lock, [&] { return signalled_ != 0 || !incoming_.empty(); });
  }
  signalled_ = 0;
  // New commands restart the spinning phase: they may well end within microseconds.
  if (!incoming_.empty()) last_progress = steady_clock::now();
  for (auto& e : incoming_) pending.push_back(std::move(e));
  incoming_.clear();
  has_incoming_.store(false, std::memory_order_relaxed);
  work.to_issue.swap(to_issue_);
  has_to_issue_.store(false, std::memory_order_relaxed);
  work.due = take_due(steady_clock::now());
  work.stopping = stopping_;
  return true;
}

void completion_queue::cover_queues(std::vector<intrusive_ptr<queue_state>>& due, bool stopping) {
  std::vector<to_cover> later;
  const auto now = std::chrono::steady_clock::now();
  for (auto& queue : due) {
    if (stopping)
      queue->cover(*this);
    else if (auto again = queue->cover_when_quiet(*this, now))
      later.push_back({std::move(queue), *again});
  }
  if (!later.empty()) {
    std::lock_guard guard{mutex_};
    cover_at(std::move(later));
  }
}

bool completion_queue::finish_done(std::vector<entry>& pending) {
  // Finish in submission order, so that a queue's futures become ready in its order. Every
  // event is asked on each pass: asking only each queue's oldest was measured slower on an
  // H200 for small transfers (2-8 MiB partitions, both backends).
  std::size_t kept = 0;
  bool progress = false;
  for (auto& e : pending) {
    if (try_finish(e))
      progress = true;
    else
      pending[kept++] = std::move(e);
  }
  pending.resize(kept);
  return progress;
}

void completion_queue::pause_between_polls(bool progress,
                                           std::chrono::steady_clock::time_point& last_progress) {
  using namespace std::chrono;
  // Polling: spin (yielding) for 2 ms after the last progress, since most commands end
  // sooner and a nap's wake-up would add to their latency; then nap for 1/32 of the time
  // waited so far (at most 50 µs), so a long kernel costs little CPU and is seen at most
  // ~3 % (and 50 µs) late: with a cap of 200 µs, a 15 ms copy could be seen 1.3 % late.
  auto now = steady_clock::now();
  if (progress) last_progress = now;
  auto idle = now - last_progress;
  if (idle < milliseconds(2)) {
    // A command may end any moment: its response should find a worker awake.
    results_.expect_work_until(last_progress + milliseconds(2));
    std::this_thread::yield();
  } else {
    auto nap = std::min<steady_clock::duration>(idle / 32, microseconds(50));
    std::unique_lock lock{mutex_};
    naps_ = true;
    wake_.wait_for(lock, nap, [&] { return !incoming_.empty() || !to_issue_.empty(); });
    naps_ = false;
  }
}

}  // namespace troupe::detail
