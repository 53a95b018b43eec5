#include "troupe/kernel/detail/kernel_actor_base.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "troupe/core/request.hpp"

namespace troupe::kernel::detail {

kernel_actor_base::kernel_actor_base(actor_system& system, std::string kernel_name,
                                     device_set devices,
                                     std::vector<shared_future<program>> programs)
    : event_based_actor(system, "kernel " + kernel_name),
      kernel_name_(std::move(kernel_name)),
      policy_(devices.policy) {
  for (std::size_t i = 0; i < devices.devices.size(); ++i) {
    const device& dev = devices.devices[i];
    // The queue comes with the first request: spawning many actors costs no queues.
    device_slot& slot = slots_.emplace_back();
    slot.dev = dev;
    slot.prog = std::move(programs[i]);
  }
}

std::string kernel_actor_base::label() const {
  return "kernel actor '" + kernel_name_ + "'";
}

void kernel_actor_base::watch_programs() {
  programs_ready_ = true;
  for (const auto& slot : slots_) programs_ready_ = programs_ready_ && slot.prog.is_ready();
  if (programs_ready_) return;
  // Told by a message, so that the waiting requests run on this actor, in order.
  for (const auto& slot : slots_) {
    slot.prog.then(inline_execution, [me = self()](const shared_future<program>&) {
      troupe::send(me, programs_ready{});
    });
  }
}

void kernel_actor_base::on_programs_ready() {
  if (programs_ready_) return;
  for (const auto& slot : slots_) {
    if (!slot.prog.is_ready()) return;
  }
  programs_ready_ = true;
  while (!waiting_.empty()) {
    auto work = std::move(waiting_.front());
    waiting_.pop_front();
    work();
  }
}

void kernel_actor_base::wait_for_programs(std::function<void()> work) {
  waiting_.push_back(std::move(work));
}

device_slot& kernel_actor_base::pick_slot(const std::optional<device>& home,
                                          std::size_t work_items) {
  device_slot* chosen = nullptr;
  if (home) {
    for (auto& slot : slots_) {
      if (slot.dev == *home) chosen = &slot;
    }
    if (chosen == nullptr) {
      std::string runs_on;
      for (const auto& slot : slots_) runs_on += (runs_on.empty() ? "" : ", ") + slot.dev.name();
      throw error{errc::invalid_argument, label() + ": a mem_ref input is on " + home->name() +
                                              ", and this actor runs on " + runs_on +
                                              "; move it there first with mem_ref::copy_to"};
    }
  } else if (policy_ == balance::round_robin || slots_.size() == 1) {
    chosen = &slots_[next_slot_++ % slots_.size()];
  } else {
    // The device expected to finish first: its pending work plus this request, at its measured
    // speed. A device not measured yet is tried first, so that each gets measured.
    std::lock_guard lock(speed_mutex_);
    double best = std::numeric_limits<double>::infinity();
    for (auto& slot : slots_) {
      double finish =
          slot.seconds_per_item == 0
              ? -1.0 / static_cast<double>(1 + slot.pending_items)
              : slot.seconds_per_item * static_cast<double>(slot.pending_items + work_items);
      if (finish < best) {
        best = finish;
        chosen = &slot;
      }
    }
  }
  if (!chosen->queue.valid()) chosen->queue = chosen->dev.make_queue();
  if (measures_speed()) {
    std::lock_guard lock(speed_mutex_);
    chosen->pending_items += work_items;
  }
  return *chosen;
}

void kernel_actor_base::forget(device_slot& slot, std::size_t work_items) {
  if (!measures_speed()) return;
  std::lock_guard lock(speed_mutex_);
  slot.pending_items -= std::min(slot.pending_items, work_items);
}

void kernel_actor_base::record(device_slot& slot, std::size_t work_items,
                               std::chrono::steady_clock::time_point started) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(speed_mutex_);
  slot.pending_items -= std::min(slot.pending_items, work_items);
  // Queued behind the previous request on the same in-order queue, it ran only once that one
  // finished.
  const auto ran_from = std::max(started, slot.last_finish);
  slot.last_finish = now;
  if (work_items == 0 || now <= ran_from) return;
  const double seconds = std::chrono::duration<double>(now - ran_from).count();
  const double per_item = seconds / static_cast<double>(work_items);
  // A moving average: recent requests count most, one slow request does not dominate.
  slot.seconds_per_item =
      slot.seconds_per_item == 0 ? per_item : 0.75 * slot.seconds_per_item + 0.25 * per_item;
}

}  // namespace troupe::kernel::detail
