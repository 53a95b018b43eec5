#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "device/completion_queue.hpp"
#include "device/kernel_cache.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/device/detail/fresh_memory.hpp"
#include "troupe/device/device_selection.hpp"

namespace troupe::detail {

/// The device layer's per-system state: the devices of both backends, the completion thread,
/// the compiler thread, the threads that ready fresh host memory and the disk cache of compiled
/// programs.
class device_manager final : public actor_system::extension {
 public:
  explicit device_manager(actor_system& system);
  ~device_manager() override;

  /// The manager of `system`, created on first use.
  static device_manager& of(actor_system& system);

  /// This process's own devices.
  const std::vector<device>& devices() const noexcept { return devices_; }
  /// Every node's devices, this process's first: those of other nodes are asked for once, on
  /// the first call, where the net layer registered a remote_device_source.
  const std::vector<device>& all_devices();
  const std::vector<device_selection::unavailable_backend>& unavailable() const noexcept {
    return unavailable_;
  }

  completion_queue& completions() noexcept { return completions_; }
  /// The threads that ready fresh host memory for reads; ended by stop().
  const intrusive_ptr<fresh_memory>& fresh() const noexcept { return fresh_; }
  const kernel_cache& cache() const noexcept { return cache_; }

  /// Runs `job` on the compiler thread: compilation is long CPU work that must not occupy a
  /// scheduler worker.
  void compile_later(std::function<void()> job);

  /// Waits for outstanding compilations and device commands, then closes every device.
  void stop() noexcept override;

 private:
  void run_compiler();

  completion_queue completions_;
  intrusive_ptr<fresh_memory> fresh_{new fresh_memory, adopt_ref};
  kernel_cache cache_;
  actor_system& system_;
  std::vector<device> devices_;
  std::once_flag all_found_;
  std::vector<device> all_devices_;  // written once, under all_found_
  std::vector<device_selection::unavailable_backend> unavailable_;

  std::mutex compile_mutex_;
  std::condition_variable compile_wake_;
  std::deque<std::function<void()>> compile_jobs_;
  bool stopping_ = false;
  std::thread compiler_;
};

}  // namespace troupe::detail
