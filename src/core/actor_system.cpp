#include "troupe/core/actor_system.hpp"

#include <chrono>
#include <vector>

namespace troupe {

actor_system::actor_system(config cfg)
    : config_(std::move(cfg)),
      scheduler_(detail::make_counted<detail::scheduler>(config_.resolved_threads())),
      timers_(std::make_unique<detail::timer_service>()) {
  if (config_.throughput == 0)
    throw error(errc::invalid_argument, "config::throughput: expected a positive number, found 0");
  scheduler_->start();
}

actor_system::~actor_system() {
  registry_.clear();
  await_all_actors();
  timers_->stop();
  scheduler_->stop();
}

std::size_t actor_system::running_actors() const {
  std::lock_guard guard{live_mutex_};
  return live_count_;
}

actor actor_system::launch(event_based_actor* fresh) {
  {
    std::lock_guard guard{live_mutex_};
    fresh->live_next = live_head_;
    if (live_head_ != nullptr) live_head_->live_prev = fresh;
    live_head_ = fresh;
    ++live_count_;
  }
  fresh->add_strong_ref();  // the scheduler's, until the first run blocks the mailbox
  scheduler_->schedule(fresh);
  return actor::adopt(fresh);
}

void actor_system::actor_finished(event_based_actor* self) {
  std::lock_guard guard{live_mutex_};
  if (self->live_prev != nullptr) self->live_prev->live_next = self->live_next;
  if (self->live_next != nullptr) self->live_next->live_prev = self->live_prev;
  if (live_head_ == self) live_head_ = self->live_next;
  self->live_prev = self->live_next = nullptr;
  if (--live_count_ == 0) all_done_.notify_all();
}

void actor_system::await_all_actors_done() {
  std::unique_lock lock{live_mutex_};
  all_done_.wait(lock, [this] { return live_count_ == 0; });
}

void actor_system::await_all_actors() {
  using namespace std::chrono_literals;
  std::unique_lock lock{live_mutex_};
  int quiet_checks = 0;
  while (live_count_ > 0) {
    if (all_done_.wait_for(lock, 10ms, [this] { return live_count_ == 0; })) break;
    // Nothing can wake the remaining actors once no worker runs, nothing is queued and no
    // timeout is pending: they wait for messages that will never come (a reference cycle, or
    // a handle kept in a container that outlives the system). Three quiet checks in a row
    // rule out a worker that was just about to pick up a job.
    bool quiet = scheduler_->idle() && timers_->active() == 0;
    quiet_checks = quiet ? quiet_checks + 1 : 0;
    if (quiet_checks < 3) continue;
    quiet_checks = 0;
    lock.unlock();
    stop_remaining_actors();
    lock.lock();
  }
}

std::size_t actor_system::stop_remaining_actors() {
  std::vector<actor> remaining;
  {
    std::lock_guard guard{live_mutex_};
    for (auto* a = live_head_; a != nullptr; a = a->live_next)
      if (a->try_add_strong_ref()) remaining.push_back(actor::adopt(a));
  }
  for (auto& a : remaining)
    a->enqueue(make_mailbox_element(
        {}, {}, {},
        exit_msg{
            {},
            error{errc::user_shutdown, a->description() + " ended: its actor system shut down"}}));
  return remaining.size();
}

}  // namespace troupe
