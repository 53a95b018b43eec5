#pragma once

// For tests of the copy thread: an environment setting for the length of a test, and a stand-in
// for a driver that blocks in reads until the device is done (NVIDIA's OpenCL), which PoCL is
// not.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "troupe/async/executor.hpp"
#include "troupe/device.hpp"

namespace troupe::test {

/// Sets environment variable `name` to `value` until destroyed, then restores it. Only while no
/// other thread reads the environment: set it before making the actor system that reads it.
class environment_setting {
 public:
  environment_setting(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~environment_setting() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  environment_setting(const environment_setting&) = delete;
  environment_setting& operator=(const environment_setting&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Installed as `dev`'s blocking-issue hook (device_state::set_blocking_issue_hook), it holds the
/// thread that issues a read the driver may block in until release(), as such a driver would
/// until the device is done. A scheduler worker is counted and let go at once instead: holding
/// it would hang a system of one worker.
class blocking_read_stand_in {
 public:
  explicit blocking_read_stand_in(const device& dev) : seen_(std::make_shared<seen>()) {
    dev.state()->set_blocking_issue_hook([seen = seen_] {
      std::unique_lock lock{seen->mutex};
      const bool on_worker = detail::this_thread_executor() != nullptr;
      ++(on_worker ? seen->on_workers : seen->held);
      seen->changed.notify_all();
      if (!on_worker) seen->changed.wait(lock, [&] { return seen->released; });
    });
  }
  ~blocking_read_stand_in() { release(); }
  blocking_read_stand_in(const blocking_read_stand_in&) = delete;
  blocking_read_stand_in& operator=(const blocking_read_stand_in&) = delete;

  /// Waits until a read is issued; true when the thread that issues it is held (no worker).
  bool wait_for_a_read() {
    std::unique_lock lock{seen_->mutex};
    seen_->changed.wait(lock, [&] { return seen_->held + seen_->on_workers != 0; });
    return seen_->held != 0;
  }
  /// Lets the held reads go on, and those to come pass.
  void release() {
    std::lock_guard lock{seen_->mutex};
    seen_->released = true;
    seen_->changed.notify_all();
  }
  /// Reads issued on a scheduler worker so far.
  int on_workers() const {
    std::lock_guard lock{seen_->mutex};
    return seen_->on_workers;
  }

 private:
  struct seen {
    std::mutex mutex;
    std::condition_variable changed;
    int held = 0;
    int on_workers = 0;
    bool released = false;
  };
  std::shared_ptr<seen> seen_;
};

}  // namespace troupe::test
