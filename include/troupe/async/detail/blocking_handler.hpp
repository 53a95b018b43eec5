#pragma once

namespace troupe::detail {

/// What a thread that must not simply block (a scheduler worker) does around a blocking wait
/// for a future. The scheduler's workers hand their place to a spare worker while they block,
/// so the jobs they would have run run elsewhere; nothing ever runs on the stack of a thread that
/// waits, so a job can never be stuck below another that waits for it.
class blocking_handler {
 public:
  virtual ~blocking_handler() = default;

  /// Whether the thread should hand its place on at once instead of spinning first: it holds
  /// jobs that nobody else was woken for.
  virtual bool hand_off_at_once() const noexcept = 0;

  /// Called before the thread blocks. Throws troupe::error when nobody can take its place.
  virtual void begin_blocking() = 0;

  /// Called when the thread runs again after begin_blocking.
  virtual void end_blocking() noexcept = 0;
};

/// The current thread's handler (null outside scheduler workers).
blocking_handler*& this_thread_blocking_handler() noexcept;

}  // namespace troupe::detail
