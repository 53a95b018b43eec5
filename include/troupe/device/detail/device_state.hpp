#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "troupe/async/executor.hpp"
#include "troupe/async/future.hpp"
#include "troupe/device/detail/command.hpp"
#include "troupe/device/device_info.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {
class program;
}  // namespace troupe

namespace troupe::detail {

class backend_device;
class backend_event;
class backend_host_memory;
class backend_kernel;
class backend_memory;
class backend_program;
class backend_queue;
class completion_queue;
class device_manager;
class event_retirement;
class queue_state;

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
  /// The completion thread's, kept past the actor system (see event_retirement).
  event_retirement& retired_events() const noexcept { return *retired_events_; }

  /// Throws troupe::error(errc::system_gone) naming the device once the system is gone.
  void check_open(const char* caller) const;
  bool is_open() const;
  void close();

  queue_state& default_queue();
  intrusive_ptr<queue_state> make_queue();

  future<program> compile(const std::string& source, const std::string& options);

 private:
  device_manager* manager_;
  std::unique_ptr<backend_device> backend_;
  intrusive_ptr<executor> results_;
  intrusive_ptr<event_retirement> retired_events_;
  mutable std::shared_mutex open_mutex_;  // guards manager_
  mutable std::mutex mutex_;              // guards the rest
  intrusive_ptr<queue_state> default_queue_;
  /// Programs by (options, source): the in-memory program cache.
  std::map<std::string, shared_future<program>> programs_;
};

/// An in-order queue: commands are issued in the order they were submitted. A command whose
/// host-side dependencies are not ready yet waits in `deferred_`, and so do all after it.
///
/// A launch that nobody waits for yet is issued without an event of its own: the next command
/// issued with one, or a marker (cover()), tells when it has ended, since the queue runs in
/// order. It is covered as soon as someone waits for it, by the queue's 32nd such launch in a
/// row, and otherwise once the queue has issued none for completion_queue::cover_delay. When the
/// completion queue polls, such a launch is also issued by its thread instead of the submitting
/// one (issue_later), which goes on meanwhile: a pipeline's next stage is prepared while the
/// driver takes this one's launch. Where the driver prefers one launching thread, every such
/// launch goes there; elsewhere only those that come while a cover is due, when the thread is
/// awake for the queue anyway.
class queue_state final : public ref_counted {
 public:
  /// `keep_device`: false for the device's own default queue, which must not keep its owner
  /// alive (every command holds a buffer or program, and so the device, until it completes).
  queue_state(device_state& device, bool keep_device, std::unique_ptr<backend_queue> backend);
  ~queue_state() override;

  device_state& device() noexcept { return *device_; }
  backend_queue& backend() noexcept { return *backend_; }

  /// Submits `cmd` to run after `deps`; `result` receives its end. Only the dependencies not
  /// ready yet are kept, so the list is not copied.
  void submit(command cmd, const dependency_list& deps, intrusive_ptr<command_result> result);
  /// Whether a read of `bytes` into pageable memory goes through a staging block, so that its
  /// destination may be prepared while the device copies (destination_gate).
  bool stages_reads_of(std::size_t bytes) const noexcept;
  /// Whether the driver charges for calls beside the thread that launches (see
  /// backend_queue::prefers_one_launching_thread). False for a queue made after the system went.
  bool prefers_one_launching_thread() const noexcept;

  struct pending;

  /// Issues the deferred commands whose dependencies are ready, in order. `completions`: the
  /// completion queue's own thread issues (issue_later), so what was submitted before the actor
  /// system went is issued still, and it stops at the first command that is not a launch; else
  /// null.
  void drain(completion_queue* completions = nullptr);

  /// The queue whose last submitted command produces `result`, if that command has not ended:
  /// a command submitted there next runs right after it, without waiting on an event. Else null.
  static intrusive_ptr<queue_state> ending_with(const state_base& result);

  /// Enqueues a marker after the launches issued without an event and hands it to the
  /// completion queue, which completes them when it has ended. Nothing when there are none.
  void cover() noexcept;
  /// The same, once the actor system is going (the device is closed): from `completions` itself.
  void cover(completion_queue& completions) noexcept;
  /// The same, when `completions` finds a cover due, unless the queue is busy: issuing right
  /// now, or it issued a launch without an event less than cover_delay ago. Then it returns
  /// when to look again. A marker enqueued between a pipeline's launches would contend with the
  /// thread that issues them, for the queue's lock and the driver's; a queue that keeps issuing
  /// is covered by its own launches (see most_uncovered).
  std::optional<std::chrono::steady_clock::time_point> cover_when_quiet(
      completion_queue& completions, std::chrono::steady_clock::time_point now) noexcept;

 private:
  struct covered;
  /// Most launches left without an event at a time: the next one gets an event, so that the
  /// memory they hold is given back in bounded batches even when a queue never pauses.
  static constexpr std::size_t most_uncovered = 32;

  /// Returns the launches that failed to be covered, to be settled after the lock.
  std::vector<intrusive_ptr<pending>> cover_locked(completion_queue& completions) noexcept;
  /// Hands the launches without an event to `completions`, to end with `event`.
  void hand_over_uncovered(intrusive_ptr<backend_event> event,
                           completion_queue& completions) noexcept;

  /// What issue() enqueued: nothing, a launch not flushed yet, or a command flushed with all
  /// before it.
  enum class issued : std::uint8_t { nothing, held, flushed };
  /// Issues `op` under mutex_; a command that ends there (fails, or has nothing to do) is only
  /// marked, and settled by the caller after the lock: its future's continuations may submit.
  /// `completions` as in drain(). `more`: another command is ready to issue right after it, so
  /// a launch without an event need not be flushed. Launches whose cover failed go to `ended`.
  issued issue(pending& op, completion_queue* completions, bool more,
               std::vector<intrusive_ptr<pending>>& ended) noexcept;
  /// Whether `op`, ready to issue, goes to the completion thread (issue_later): a launch nobody
  /// waits for, in polling mode, and unless the backend prefers one launching thread, while a
  /// cover of the queue is due. Then it is handed on.
  bool hand_on(pending& op);
  /// A copy between devices without peer access: a read here, then a write there.
  void submit_staged_copy(pending& op, const dependency_list& deps);

  device_state* device_;
  intrusive_ptr<device_state> device_ref_;
  std::unique_ptr<backend_queue> backend_;
  /// Held while issuing, so that commands reach the driver in order; guards uncovered_.
  std::mutex mutex_;
  /// Guards deferred_ only, and only briefly: submitting never waits for a driver call.
  std::mutex order_mutex_;
  std::deque<intrusive_ptr<pending>> deferred_;
  std::vector<intrusive_ptr<pending>> uncovered_;         ///< issued without an event, oldest first
  std::chrono::steady_clock::time_point last_uncovered_;  ///< when the last of them was issued
  std::atomic<bool> has_uncovered_{false};                ///< !uncovered_.empty(), read unlocked
  std::atomic<const void*> last_submitted_{nullptr};  ///< the marker of the last command submitted
};

/// Memory of one buffer.
class buffer_state final : public ref_counted {
 public:
  buffer_state(intrusive_ptr<device_state> device, std::unique_ptr<backend_memory> memory,
               std::size_t bytes);
  ~buffer_state() override;

  device_state& device() noexcept { return *device_; }
  const intrusive_ptr<device_state>& device_handle() const noexcept { return device_; }
  backend_memory* memory() noexcept { return memory_.get(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  intrusive_ptr<device_state> device_;
  std::unique_ptr<backend_memory> memory_;  // null for an empty buffer
  std::size_t bytes_;
};

/// Page-locked host memory.
class host_memory_state final : public ref_counted {
 public:
  host_memory_state(intrusive_ptr<device_state> device, std::unique_ptr<backend_host_memory> memory,
                    std::size_t bytes);
  ~host_memory_state() override;

  void* data() noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  intrusive_ptr<device_state> device_;
  std::unique_ptr<backend_host_memory> memory_;
  void* data_ = nullptr;
  std::size_t bytes_;
};

/// A built program and its kernels, created on first use and shared by all launches.
class program_state final : public ref_counted {
 public:
  program_state(intrusive_ptr<device_state> device, std::unique_ptr<backend_program> backend,
                bool from_cache);
  ~program_state() override;

  device_state& device() noexcept { return *device_; }
  backend_program& backend() noexcept { return *backend_; }
  bool from_cache() const noexcept { return from_cache_; }

  /// The kernel called `name`; throws troupe::error(errc::invalid_argument) if there is none.
  backend_kernel& kernel(const std::string& name);

 private:
  intrusive_ptr<device_state> device_;
  std::unique_ptr<backend_program> backend_;
  bool from_cache_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<backend_kernel>, std::less<>> kernels_;
};

/// Allocates `bytes` of device memory; throws troupe::error (errc::out_of_device_memory,
/// errc::system_gone) naming the caller.
intrusive_ptr<buffer_state> allocate_buffer(device_state& device, std::size_t bytes,
                                            const char* caller);
intrusive_ptr<host_memory_state> allocate_host_memory(device_state& device, std::size_t bytes,
                                                      const char* caller);

/// An error for a range [offset, offset + count) outside `size` elements, or null.
std::exception_ptr check_range(const char* caller, std::size_t offset, std::size_t count,
                               std::size_t size);

}  // namespace troupe::detail
