#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "troupe/async/shared_state.hpp"
#include "troupe/device/detail/command.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class backend_event;
class backend_queue;
class completion_queue;

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
///
/// Where the driver may block in a command until the device is done (backend_queue::
/// may_block_in: NVIDIA's OpenCL reads), a scheduler worker or the completion thread hands such
/// a command to the device's copy thread (copy_issuer), and never waits for the issuing lock,
/// which a thread in such a command holds while the driver blocks: finding it held, it hands
/// the queue to the copy thread instead. A program's own threads may wait, and issue such
/// commands themselves.
class queue_state final : public ref_counted {
 public:
  /// Who issues a queue's ready commands (drain()).
  enum class issuer : std::uint8_t {
    /// The thread that submitted them, or that made their host dependencies ready.
    submitter,
    /// The completion thread (issue_later): launches only.
    completion,
    /// The device's copy thread: every command, those the driver may block in too.
    copy_thread,
  };

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

  /// Issues the deferred commands whose dependencies are ready, in order, as `who` may: it
  /// stops at a command that is not `who`'s, and hands on to the copy thread one the driver may
  /// block in. `completions`: given by the completion thread and the copy thread, so that what
  /// was submitted before the actor system went is issued still; else null.
  void drain(issuer who = issuer::submitter, completion_queue* completions = nullptr);

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
  /// Takes the issuing lock for `who`, or hands the queue to the copy thread where it is held
  /// and `who` may not wait for it (see the class comment); then `lock` is not locked.
  void lock_for(issuer who, std::unique_lock<std::mutex>& lock);
  /// Whether `who` issues `op`, ready at the front; sets `hand_over` for a command that goes to
  /// the copy thread instead.
  bool issues(issuer who, const pending& op, bool& hand_over) const noexcept;
  /// Hands the queue to the device's copy thread; false once the actor system is gone.
  bool hand_to_copy_thread();
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
  /// The driver may block in some commands (backend_queue::may_block_in).
  bool may_block_;
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

}  // namespace troupe::detail
