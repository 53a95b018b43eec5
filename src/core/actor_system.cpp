#include "troupe/core/actor_system.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include "troupe/core/mailbox_element.hpp"

// Defined by the net layer when it is linked (its CMake target makes sure of that): joins the
// other nodes of an MPI job. Weak, so that core alone links without it.
extern "C" void troupe_net_join(troupe::actor_system* system) __attribute__((weak));

namespace troupe {

actor_system::actor_system(config cfg)
    : config_(std::move(cfg)),
      // A worker stands by for device responses only where that leaves other cores to run on.
      scheduler_(detail::make_counted<detail::scheduler>(
          config_.resolved_threads(), detail::scheduler::default_spin_rounds,
          std::thread::hardware_concurrency() >= 4, config_.spare_threads)),
      timers_(std::make_unique<detail::timer_service>()) {
  if (config_.throughput == 0)
    throw error(errc::invalid_argument, "config::throughput: expected a positive number, found 0");
  if (!config_.default_handler)
    throw error(errc::invalid_argument,
                "config::default_handler: expected a handler (one of troupe::default_handlers, "
                "say), found an empty function");
  scheduler_->start();
  if (troupe_net_join != nullptr) {
    try {
      troupe_net_join(this);
    } catch (...) {
      shutdown_unstarted();
      throw;
    }
  }
}

void actor_system::shutdown_unstarted() noexcept {
  std::vector<std::pair<const void*, std::unique_ptr<extension>>> extensions;
  {
    std::lock_guard guard{extensions_mutex_};
    extensions.swap(extensions_);
  }
  for (auto& [key, ext] : extensions) ext->stop();
  extensions.clear();
  timers_->stop();
  scheduler_->stop();
}

actor_system::~actor_system() {
  shutting_down_.store(true, std::memory_order_release);
  {
    std::lock_guard guard{extensions_mutex_};
    for (auto& [key, ext] : extensions_) ext->shutdown_started();
  }
  registry_.clear();
  await_all_actors();
  // Stopped outside the lock: stopping may run continuations that look up extensions.
  std::vector<std::pair<const void*, std::unique_ptr<extension>>> extensions;
  {
    std::lock_guard guard{extensions_mutex_};
    extensions.swap(extensions_);
  }
  for (auto& [key, ext] : extensions) ext->stop();
  while (!extensions.empty()) extensions.pop_back();  // newest first
  timers_->stop();
  scheduler_->stop();
}

actor_system::extension* actor_system::find_extension(const void* key) {
  std::lock_guard guard{extensions_mutex_};
  for (auto& [k, ext] : extensions_)
    if (k == key) return ext.get();
  return nullptr;
}

actor_system::extension& actor_system::extension_for(
    const void* key, std::unique_ptr<extension> (*make)(actor_system&)) {
  std::lock_guard guard{extensions_mutex_};
  for (auto& [k, ext] : extensions_)
    if (k == key) return *ext;
  extensions_.emplace_back(key, make(*this));
  return *extensions_.back().second;
}

std::size_t actor_system::running_actors() const {
  return live_count_.load(std::memory_order_acquire);
}

actor actor_system::launch(event_based_actor* fresh) {
  live_count_.fetch_add(1, std::memory_order_acq_rel);
  {
    auto& shard = shard_of(fresh);
    std::lock_guard guard{shard.mutex};
    fresh->live_next = shard.head;
    if (shard.head != nullptr) shard.head->live_prev = fresh;
    shard.head = fresh;
  }
  fresh->add_strong_ref();  // the scheduler's, until the first run blocks the mailbox
  scheduler_->schedule(fresh);
  return actor::adopt(fresh);
}

void actor_system::actor_finished(event_based_actor* self) {
  {
    auto& shard = shard_of(self);
    std::lock_guard guard{shard.mutex};
    if (self->live_prev != nullptr) self->live_prev->live_next = self->live_next;
    if (self->live_next != nullptr) self->live_next->live_prev = self->live_prev;
    if (shard.head == self) shard.head = self->live_next;
    self->live_prev = self->live_next = nullptr;
  }
  if (live_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::lock_guard guard{done_mutex_};  // a waiter checks the count under this lock
    all_done_.notify_all();
  }
}

void actor_system::await_all_actors_done() {
  std::unique_lock lock{done_mutex_};
  all_done_.wait(lock, [this] { return live_count_.load(std::memory_order_acquire) == 0; });
}

void actor_system::await_all_actors() {
  auto done = [this] { return live_count_.load(std::memory_order_acquire) == 0; };
  std::unique_lock lock{done_mutex_};
  while (!done()) {
    // Looked at again each millisecond: the answer is exact whenever it is taken; how often it
    // is taken only decides how soon after the last work the remaining actors are ended.
    if (all_done_.wait_for(lock, std::chrono::milliseconds{1}, done)) break;
    shutdown_checks_.fetch_add(1, std::memory_order_relaxed);
    if (!nothing_can_wake_actors()) continue;
    lock.unlock();
    stop_remaining_actors();
    lock.lock();
  }
}

bool actor_system::nothing_can_wake_actors() const {
  // An actor waits for a message; only a job, a timer or work in flight (a device command, a
  // continuation waiting for a promise) sends one. Each of these comes only from another: a
  // job from a timer or from work in flight, and those from a job, which runs on a worker. So
  // with every worker parked, no timer and no work in flight, and no worker woken between the
  // first look and the last, nothing was in flight at the time of the middle looks, and
  // nothing will be.
  auto before = scheduler_->quiet_wakeups();
  if (!before) return false;
  if (timers_->active() != 0 || scheduler_->work_in_flight() != 0) return false;
  return scheduler_->quiet_wakeups() == before;
}

void actor_system::stop_remaining_actors() {
  std::vector<actor> remaining;
  for (auto& shard : live_) {
    std::lock_guard guard{shard.mutex};
    for (auto* a = shard.head; a != nullptr; a = a->live_next)
      if (a->try_add_strong_ref()) remaining.push_back(actor::adopt(a));
  }
  for (auto& a : remaining)
    a->enqueue(make_mailbox_element(
        {}, {}, {},
        exit_msg{
            {},
            error{errc::user_shutdown, a->description() + " ended: its actor system shut down"}}));
}

}  // namespace troupe
