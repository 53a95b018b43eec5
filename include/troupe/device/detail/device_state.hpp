#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "troupe/async/executor.hpp"
#include "troupe/async/future.hpp"
#include "troupe/device/device_info.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {
class program;
}  // namespace troupe

namespace troupe::detail {

class backend_device;
class copy_issuer;
class device_manager;
class fresh_memory;
class queue_state;
class retirement;

/// A device as the frontend holds it. Handles (device, buffers, queues, programs) keep it, and
/// so its driver context, alive; the manager closes it when the actor system goes.
class device_state final : public ref_counted {
 public:
  device_state(device_manager& manager, std::unique_ptr<backend_device> backend,
               intrusive_ptr<executor> results);
  ~device_state() override;

  const device_info& info() const noexcept;
  backend_device& backend() noexcept { return *backend_; }

  /// Where continuations of this device's futures run: the actor system's scheduler.
  const intrusive_ptr<executor>& results() const noexcept { return results_; }

  /// While held, the device stays open (or stays closed): commands are issued under it, so
  /// that closing waits for commands being issued and none is issued after.
  std::shared_lock<std::shared_mutex> hold_open() const { return std::shared_lock{open_mutex_}; }
  /// The manager, or null once the actor system is gone. Use only under hold_open().
  device_manager* manager() const noexcept { return manager_; }
  /// Where events and queues go to be dropped by the completion thread; kept past the actor
  /// system (see retirement).
  detail::retirement& retired() const noexcept { return *retired_; }
  /// The system's threads that ready fresh host memory for reads, kept past the system (which
  /// ends its threads).
  fresh_memory& fresh() const noexcept { return *fresh_; }

  /// How many driver calls waited for the device on a scheduler worker: none may (tests check).
  std::size_t waits_on_workers() const noexcept;

  /// Throws troupe::error(errc::system_gone) naming the device once the system is gone.
  void check_open(const char* caller) const;
  bool is_open() const;
  void close();

  queue_state& default_queue();
  intrusive_ptr<queue_state> make_queue();

  /// Hands `queue` to the device's copy thread (copy_issuer), started on first use, which
  /// issues its ready commands. False once the actor system is gone.
  bool issue_on_copy_thread(intrusive_ptr<queue_state> queue);

  future<program> compile(const std::string& source, const std::string& options);

  /// For tests: `hook` runs on the thread that issues a command the driver may block in
  /// (backend_queue::may_block_in), right before it is issued, so that a test may stand in for
  /// a driver that blocks there. Set it before such commands are submitted.
  void set_blocking_issue_hook(std::function<void()> hook);
  /// Runs the hook, if one is set.
  void before_blocking_issue() const {
    if (has_blocking_issue_hook_.load(std::memory_order_acquire)) blocking_issue_hook_();
  }

 private:
  device_manager* manager_;
  std::unique_ptr<backend_device> backend_;
  intrusive_ptr<executor> results_;
  intrusive_ptr<detail::retirement> retired_;
  intrusive_ptr<fresh_memory> fresh_;
  mutable std::shared_mutex open_mutex_;  // guards manager_
  mutable std::mutex mutex_;              // guards the rest
  intrusive_ptr<queue_state> default_queue_;
  /// Made on first use, while open; stopped by close(), destroyed with the device.
  std::unique_ptr<copy_issuer> copies_;
  /// Programs by (options, source): the in-memory program cache.
  std::map<std::string, shared_future<program>> programs_;
  std::function<void()> blocking_issue_hook_;  // written once, before has_blocking_issue_hook_
  std::atomic<bool> has_blocking_issue_hook_{false};
};

}  // namespace troupe::detail
