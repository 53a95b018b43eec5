#include "troupe/core/detail/scheduler.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <system_error>

#include "troupe/async/detail/blocking_handler.hpp"
#include "troupe/async/error.hpp"
#include "troupe/support/thread_name.hpp"

namespace troupe::detail {

class scheduler::worker final : public blocking_handler {
 public:
  worker(scheduler& parent, std::size_t index) : parent_(parent), index_(index) {}

  void start() {
    thread_ = std::thread{[this] { loop(); }};
    name_thread(thread_, "troupe-worker");
  }

  void join() {
    if (thread_.joinable()) thread_.join();
  }

  /// Jobs this worker pushed for itself wait for it, or for a searcher: nobody was woken.
  bool hand_off_at_once() const noexcept override { return !deque_.empty(); }
  void begin_blocking() override { parent_.hand_off(*this); }
  void end_blocking() noexcept override { parent_.take_back(*this); }

  void push(job* j) { deque_.push(j); }
  std::int64_t queued() const { return deque_.size(); }
  bool has_local_work() const {
    return !deque_.empty() || inbox_.load(std::memory_order_seq_cst) != nullptr;
  }
  job* steal() { return deque_.steal(); }

  /// Jobs from threads that are not workers, spread over the workers' inboxes (lock-free
  /// stacks) so that one busy sender does not make every worker contend on one cache line.
  void push_inbox(job* j) {
    auto* head = inbox_.load(std::memory_order_relaxed);
    do {
      j->next_job = head;
    } while (!inbox_.compare_exchange_weak(head, j, std::memory_order_seq_cst,
                                           std::memory_order_relaxed));
  }

  /// Takes the whole inbox (no lock, no ABA), oldest first; false if it was empty.
  bool take_inbox(std::vector<job*>& out) {
    if (inbox_.load(std::memory_order_acquire) == nullptr) return false;
    auto* list = inbox_.exchange(nullptr, std::memory_order_acq_rel);
    for (; list != nullptr; list = list->next_job) out.push_back(list);
    std::reverse(out.begin(), out.end());
    return !out.empty();
  }

  void unpark() {
    {
      std::lock_guard guard{mutex_};
      notified_ = true;
    }
    condition_.notify_one();
  }

  /// Sleeps until unpark().
  void sleep() {
    std::unique_lock lock{mutex_};
    condition_.wait(lock, [this] { return notified_; });
    notified_ = false;
  }

  scheduler& parent() const noexcept { return parent_; }
  std::size_t index() const noexcept { return index_; }

 private:
  job* find_job() {
    if (auto* j = deque_.take()) return j;
    if (auto* j = take_batch(*this)) return j;
    return steal_from_others();
  }

  /// Takes `from`'s whole inbox: runs the oldest job and keeps the rest in the local deque,
  /// where idle workers can steal them.
  job* take_batch(worker& from) {
    if (!from.take_inbox(batch_)) return nullptr;
    auto* first = batch_.front();
    for (auto i = batch_.size() - 1; i > 0; --i) deque_.push(batch_[i]);  // oldest on top
    if (batch_.size() > 1) parent_.wake_one();
    batch_.clear();
    return first;
  }

  /// What other threads sent (the inboxes), but nothing from other workers' deques.
  job* find_sent_job() {
    if (auto* j = deque_.take()) return j;
    const auto n = parent_.started();
    for (std::size_t i = 0; i < n; ++i)
      if (auto* j = take_batch(*parent_.workers_[i])) return j;
    return nullptr;
  }

  job* steal_from_others() {
    auto& all = parent_.workers_;
    const auto n = parent_.started();
    if (n < 2) return nullptr;
    auto start = static_cast<std::size_t>(random_() % n);
    for (std::size_t i = 0; i < n; ++i) {
      auto victim = (start + i) % n;
      if (victim == index_) continue;
      if (auto* j = all[victim]->steal()) return j;
      if (auto* j = take_batch(*all[victim])) return j;
    }
    return nullptr;
  }

  void loop();
  void park();
  job* stand_by();

  scheduler& parent_;
  std::size_t index_;
  work_stealing_deque<job> deque_;
  std::atomic<job*> inbox_{nullptr};
  std::vector<job*> batch_;
  std::minstd_rand random_{static_cast<unsigned>(index_ + 1)};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable condition_;
  bool notified_ = false;
};

namespace {
thread_local scheduler::worker* current_worker = nullptr;
}  // namespace

void scheduler::worker::loop() {
  current_worker = this;
  this_thread_blocking_handler() = this;
  this_thread_executor() = &parent_;
  bool woken = false;
  for (;;) {
    // A blocked worker resumed, so one worker too many runs: the first that looks for work with
    // none of its own queued retires.
    if (parent_.surplus_.load(std::memory_order_relaxed) > 0 && deque_.empty() &&
        parent_.retire(*this)) {
      woken = true;
      continue;
    }
    job* j = find_job();
    bool last_searcher = false;
    if (j == nullptr) {
      // Searching: while any worker searches, pushers wake nobody, since a searcher will find
      // the job; this keeps a thread that sends many messages from paying for a wake-up each.
      parent_.searching_.fetch_add(1, std::memory_order_seq_cst);
      for (std::size_t round = 0; j == nullptr && round < parent_.spin_rounds_; ++round) {
        std::this_thread::yield();
        j = find_job();
      }
      last_searcher = parent_.searching_.fetch_sub(1, std::memory_order_seq_cst) == 1;
      if (j == nullptr) {
        j = stand_by();
        last_searcher = last_searcher || j != nullptr;
      }
    }
    if (j != nullptr) {
      // A worker that was woken, or the last searcher, hands the search on when more work is
      // queued, so that all workers join in when a burst arrives (after Go's and Tokio's
      // schedulers).
      if ((woken || last_searcher) && parent_.has_work()) parent_.wake_one();
      woken = false;
      j->run();
      continue;
    }
    if (parent_.stopping_.load(std::memory_order_acquire)) break;
    park();
    woken = true;
  }
  this_thread_executor() = nullptr;
  this_thread_blocking_handler() = nullptr;
  current_worker = nullptr;
}

/// Waits for work sent from outside while it is expected, if no other worker does already.
/// It neither counts as searching nor steals: a worker that hands a job to itself (the next stage
/// of a pipeline) keeps it, and one with more work than it can run wakes a searcher as usual.
job* scheduler::worker::stand_by() {
  if (!parent_.claim_standby()) return nullptr;
  job* j = nullptr;
  while (j == nullptr && parent_.expects_work() &&
         !parent_.stopping_.load(std::memory_order_relaxed)) {
    std::this_thread::yield();
    j = find_sent_job();
  }
  // Released before the job runs: the next expect_work_until finds nobody and asks another.
  parent_.standby_.store(standby_state::none, std::memory_order_seq_cst);
  return j;
}

void scheduler::worker::park() {
  {
    std::lock_guard guard{parent_.sleep_mutex_};
    parent_.sleepers_.push_back(this);
    parent_.num_sleepers_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Announce first, check second: a pusher that missed our announcement published its job
  // before we look here (both sides use seq_cst), so no wake-up is lost.
  if (parent_.has_work() || parent_.standby_wanted() ||
      parent_.stopping_.load(std::memory_order_seq_cst)) {
    std::lock_guard guard{parent_.sleep_mutex_};
    auto& sleepers = parent_.sleepers_;
    auto it = std::find(sleepers.begin(), sleepers.end(), this);
    if (it != sleepers.end()) {
      sleepers.erase(it);
      parent_.num_sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      ++parent_.wakeups_;
      return;
    }
    // Someone popped us already and will unpark us: fall through and take that notification.
  }
  sleep();
}

scheduler::scheduler(std::size_t threads, std::size_t spin_rounds, bool standby,
                     std::size_t spare_threads)
    : threads_(std::max<std::size_t>(threads, 1)),
      spin_rounds_(spin_rounds),
      standby_enabled_(standby) {
  workers_.resize(threads_ + spare_threads);
  for (std::size_t i = 0; i < threads_; ++i) workers_[i] = std::make_unique<worker>(*this, i);
  started_.store(threads_, std::memory_order_release);
}

scheduler::~scheduler() {
  stop();
}

void scheduler::start() {
  running_.store(true, std::memory_order_release);
  for (std::size_t i = 0; i < threads_; ++i) workers_[i]->start();
}

void scheduler::stop() {
  if (!running_.load(std::memory_order_acquire)) return;
  stopping_.store(true, std::memory_order_seq_cst);
  std::vector<worker*> parked;
  {
    std::lock_guard guard{sleep_mutex_};
    parked.swap(sleepers_);
    parked.insert(parked.end(), spares_.begin(), spares_.end());
    spares_.clear();
    num_sleepers_.store(0, std::memory_order_seq_cst);
  }
  for (auto* w : parked) w->unpark();
  // A worker blocked in a job may still start a spare, in a later slot: joined in turn.
  for (std::size_t i = 0; i < started(); ++i) workers_[i]->join();
  running_.store(false, std::memory_order_release);
  // Anything scheduled while the workers wound down runs here.
  std::vector<job*> rest;
  for (std::size_t i = 0; i < started(); ++i) {
    while (workers_[i]->take_inbox(rest)) {
      for (auto* j : rest) j->run();
      rest.clear();
    }
  }
}

void scheduler::hand_off(worker& w) {
  worker* spare = nullptr;
  bool replaced = false;
  {
    std::lock_guard guard{sleep_mutex_};
    // Unless a worker too many runs already, `threads_` run unblocked, this one included:
    // another must take its place.
    replaced = surplus_.load(std::memory_order_relaxed) <= 0;
    if (replaced) {
      if (!spares_.empty()) {
        spare = spares_.back();
        spares_.pop_back();
        ++wakeups_;
      } else if (started() < workers_.size()) {
        start_spare();
      } else {
        throw error(errc::limit_reached, spare_limit_message(w.index()));
      }
      surplus_.fetch_add(1, std::memory_order_relaxed);
    }
    surplus_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (spare != nullptr) {
    spare->unpark();
  } else if (!replaced && w.hand_off_at_once()) {
    // A worker that runs already took the place: make sure one looks at the jobs left here.
    wake_one();
  }
}

std::string scheduler::spare_limit_message(std::size_t index) const {
  const auto limit = spare_threads();
  return "blocking wait for a future (get, wait) on scheduler worker " + std::to_string(index) +
         ": expected a spare worker to take this worker's place while it blocks, found the "
         "limit of " +
         std::to_string(limit) + (limit == 1 ? " spare thread" : " spare threads") +
         " reached, all standing in for blocked workers (config::spare_threads; "
         "--troupe.spare-threads=N or TROUPE_SPARE_THREADS raise it). Wait with then() "
         "instead of get() where handlers block this often";
}

void scheduler::take_back(worker&) noexcept {
  std::lock_guard guard{sleep_mutex_};
  surplus_.fetch_add(1, std::memory_order_relaxed);
}

bool scheduler::retire(worker& w) {
  {
    std::lock_guard guard{sleep_mutex_};
    if (surplus_.load(std::memory_order_relaxed) <= 0 || stopping_.load(std::memory_order_seq_cst))
      return false;
    surplus_.fetch_sub(1, std::memory_order_relaxed);
    spares_.push_back(&w);
  }
  // Jobs sent while this worker searched woke nobody: the workers that run must see them.
  if (has_work()) wake_one();
  w.sleep();
  return true;
}

void scheduler::start_spare() {
  const auto index = started();
  auto fresh = std::make_unique<worker>(*this, index);
  try {
    fresh->start();
  } catch (const std::system_error& e) {
    throw error(errc::limit_reached,
                "blocking wait for a future on a scheduler worker: expected to start spare "
                "worker " +
                    std::to_string(index - threads_ + 1) +
                    " to take its place, found: " + e.what());
  }
  workers_[index] = std::move(fresh);
  started_.store(index + 1, std::memory_order_release);
  ++wakeups_;
}

void scheduler::schedule(job* j) {
  auto* self = current_worker;
  if (self != nullptr && &self->parent() == this) {
    self->push(j);
    // The pushing worker runs this job next anyway; wake a sleeper only if there is more.
    if (self->queued() > 1) wake_one();
    return;
  }
  schedule_fair(j);
}

void scheduler::schedule_fair(job* j) {
  if (!running_.load(std::memory_order_acquire)) {
    j->run();
    return;
  }
  // Round robin over the inboxes, per sending thread: no shared counter to contend on.
  thread_local std::size_t next = std::hash<std::thread::id>{}(std::this_thread::get_id());
  workers_[next++ % threads_]->push_inbox(j);
  // A worker that stands by takes it, and wakes another if it finds more (loop()).
  if (standby_.load(std::memory_order_seq_cst) != standby_state::held) wake_one();
}

bool scheduler::has_work() const {
  const auto n = started();
  for (std::size_t i = 0; i < n; ++i)
    if (workers_[i]->has_local_work()) return true;
  return false;
}

void scheduler::wake_one() {
  if (searching_.load(std::memory_order_seq_cst) != 0) return;
  wake_sleeper();
}

void scheduler::wake_sleeper() {
  if (num_sleepers_.load(std::memory_order_seq_cst) == 0) return;
  worker* w = nullptr;
  {
    std::lock_guard guard{sleep_mutex_};
    if (sleepers_.empty()) return;
    w = sleepers_.back();
    sleepers_.pop_back();
    num_sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    ++wakeups_;
  }
  w->unpark();
}

bool scheduler::idle() const {
  std::lock_guard guard{sleep_mutex_};
  const std::size_t standing_by = this->standing_by() ? 1 : 0;
  return sleepers_.size() + spares_.size() + standing_by == started() && !has_work();
}

std::optional<std::uint64_t> scheduler::quiet_wakeups() const {
  std::lock_guard guard{sleep_mutex_};
  if (sleepers_.size() + spares_.size() != started() || has_work()) return std::nullopt;
  return wakeups_;
}

void scheduler::work_started() noexcept {
  work_in_flight_.fetch_add(1, std::memory_order_seq_cst);
}

void scheduler::work_finished() noexcept {
  work_in_flight_.fetch_sub(1, std::memory_order_seq_cst);
}

void scheduler::expect_work_until(std::chrono::steady_clock::time_point until) noexcept {
  if (!standby_enabled_) return;
  const std::int64_t ticks = until.time_since_epoch().count();
  std::int64_t known = work_expected_until_.load(std::memory_order_relaxed);
  while (known < ticks &&
         !work_expected_until_.compare_exchange_weak(known, ticks, std::memory_order_seq_cst)) {
  }
  if (standby_.load(std::memory_order_seq_cst) != standby_state::none) return;
  int nobody = standby_state::none;
  if (!standby_.compare_exchange_strong(nobody, standby_state::wanted, std::memory_order_seq_cst))
    return;
  // A searching worker takes the request on before it parks (claim_standby, standby_wanted);
  // otherwise one is woken for it, now, while the work is still on its way.
  if (searching_.load(std::memory_order_seq_cst) == 0) wake_sleeper();
}

bool scheduler::expects_work() const noexcept {
  return standby_enabled_ && std::chrono::steady_clock::now().time_since_epoch().count() <
                                 work_expected_until_.load(std::memory_order_relaxed);
}

bool scheduler::claim_standby() noexcept {
  if (!standby_enabled_) return false;
  int state = standby_.load(std::memory_order_seq_cst);
  if (state == standby_state::held) return false;
  if (!expects_work()) {
    drop_stale_request();
    return false;
  }
  return standby_.compare_exchange_strong(state, standby_state::held, std::memory_order_seq_cst);
}

bool scheduler::standby_wanted() noexcept {
  if (standby_.load(std::memory_order_seq_cst) != standby_state::wanted) return false;
  if (expects_work()) return true;
  drop_stale_request();
  return false;
}

void scheduler::drop_stale_request() noexcept {
  // Asked for too late: the next expect_work_until asks again.
  int stale = standby_state::wanted;
  standby_.compare_exchange_strong(stale, standby_state::none, std::memory_order_seq_cst);
}

}  // namespace troupe::detail
