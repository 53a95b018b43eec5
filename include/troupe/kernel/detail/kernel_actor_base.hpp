#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/device/device.hpp"
#include "troupe/device/program.hpp"
#include "troupe/kernel/detail/device_slot.hpp"
#include "troupe/kernel/device_set.hpp"

namespace troupe::kernel::detail {

/// Sent by a kernel actor to itself once its programs are compiled (or failed to).
struct programs_ready {};

/// What every kernel actor has, whatever its signature: its name, devices, programs and the
/// requests that wait for the programs. The signature-specific part is kernel_actor.
class kernel_actor_base : public event_based_actor {
 public:
  // -- constructors ---------------------------------------------------------

  /// An actor for `kernel_name` on `devices`, with the program of each (in the same order).
  kernel_actor_base(actor_system& system, std::string kernel_name, device_set devices,
                    std::vector<shared_future<program>> programs);

  // -- properties -----------------------------------------------------------

  /// "kernel actor 'name'", for messages.
  std::string label() const;

 protected:
  /// Whether a request may run now: every program is ready and nothing waits before it.
  bool runs_now() const noexcept { return programs_ready_ && waiting_.empty(); }
  /// Keeps `work` (a request that may not run now) until every program is ready; the waiting
  /// requests then run in the order they arrived.
  void wait_for_programs(std::function<void()> work);
  /// Whether requests are placed by measured speed: throughput balancing over several devices.
  /// Only then are their work items and times recorded.
  bool measures_speed() const noexcept {
    return policy_ == balance::throughput && slots_.size() > 1;
  }
  /// The behavior's handler of programs_ready.
  void on_programs_ready();
  /// Watches the programs; call from make_behavior.
  void watch_programs();

  /// The device for a request of `work_items`: where its data is (`home`, if given; an error
  /// when this actor does not run there), else by the policy.
  device_slot& pick_slot(const std::optional<device>& home, std::size_t work_items);

  /// Takes back the work items of a request that failed before its launch.
  void forget(device_slot& slot, std::size_t work_items);
  /// Records that a request of `work_items`, enqueued at `started`, finished on `slot` now
  /// (any thread).
  void record(device_slot& slot, std::size_t work_items,
              std::chrono::steady_clock::time_point started);

  std::string kernel_name_;
  std::vector<device_slot> slots_;
  balance policy_;

 private:
  std::size_t next_slot_ = 0;
  std::mutex speed_mutex_;  // guards the slots' speed and backlog (see device_slot)
  bool programs_ready_ = false;
  std::deque<std::function<void()>> waiting_;
};

}  // namespace troupe::kernel::detail
