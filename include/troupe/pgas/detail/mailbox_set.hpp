#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/pgas/detail/engine.hpp"
#include "troupe/pgas/mailbox_graph.hpp"

namespace troupe::pgas::detail {

class mpi_engine;

/// What every selector has, whatever its message type: mailboxes with their counters, the
/// dependency graph, done flags and termination detection. Created collectively: every PE
/// creates its selectors in the same order, which gives each the same id everywhere.
class mailbox_set {
 public:
  mailbox_set(const mailbox_set&) = delete;
  mailbox_set& operator=(const mailbox_set&) = delete;

  /// Runs the handler of `mailbox` on one message. Called by the engine only.
  virtual void dispatch(std::size_t mailbox, const std::byte* payload, std::size_t bytes, int from,
                        std::uint64_t code) = 0;

  /// Runs the handler of `mailbox` on `count` records of `record_bytes` each (padded to 8),
  /// one block of a buffer: one virtual call per block, not per message.
  virtual void dispatch_block(std::size_t mailbox, const std::byte* records,
                              std::size_t record_bytes, std::size_t count, int from,
                              std::uint64_t code) {
    for (std::size_t index = 0; index < count; ++index)
      dispatch(mailbox, records + index * padded(record_bytes), record_bytes, from, code);
  }

  /// The selector's name in messages ("selector 2", "actor 0").
  std::string name() const;

  /// Whether every mailbox has terminated on every PE.
  bool terminated() const noexcept { return terminated_; }

  /// Advances the termination wave; called by the engine's progress.
  void advance_termination();

  /// Counts one message into `mailbox` as processed here.
  void count_processed(std::size_t mailbox, std::size_t count = 1) noexcept {
    processed_[mailbox] += static_cast<std::int64_t>(count);
  }

  /// Whether this PE has called done() on every mailbox without predecessors.
  bool roots_done() const noexcept;

 protected:
  mailbox_set(world& owner, std::size_t mailboxes, const mailbox_graph& graph, const char* kind);
  virtual ~mailbox_set();

  /// Room for one message of `bytes` payload bytes to `mailbox` at `pe`, after the checks.
  /// Handlers may still send to a mailbox that is done (not to one that has terminated).
  std::byte* reserve(const char* call, std::size_t mailbox, int pe, std::size_t bytes,
                     bool variable, std::uint64_t code = 0) {
    if (pe < 0 || pe >= engine_->npes() || bytes > engine_->max_payload() ||
        (done_[mailbox] && (!engine_->in_handler() || finished_[mailbox])))
      reject(call, mailbox, pe, bytes);
    ++sent_[mailbox];
    return engine_->reserve(pe, key_base_ + static_cast<std::uint32_t>(mailbox), code, bytes,
                            variable);
  }

  /// Runs `handle`, one handler call on `messages` messages of `mailbox` from PE `from`. What it
  /// throws stays here instead of unwinding through the engine: the first exception is kept,
  /// later ones are counted, the messages count as processed and the next ones still run, so
  /// that termination completes on every PE. The selector then terminates with the error.
  template <class Handle>
  void guarded(std::size_t mailbox, int from, Handle&& handle, std::size_t messages = 1) noexcept {
    try {
      handle();
    } catch (...) {
      keep_failure(mailbox, from, messages);
    }
  }

  /// For the typed destructors, while dispatch() still works: done() on this PE and wait for
  /// termination, unless an exception is unwinding (then the job ends, loudly). A handler's
  /// error that nothing reported goes to the world, whose next collective throws it.
  void settle() noexcept;

  /// Marks `mailbox` done on this PE: no more messages from outside the handlers.
  void mark_done(const char* call, std::size_t mailbox);
  /// Marks every mailbox without predecessors done.
  void mark_roots_done();
  /// Runs progress until the selector has terminated everywhere; then throws its error if a
  /// handler threw on some PE.
  void wait_terminated();
  /// Completes once the selector has terminated everywhere (progress makes it so).
  future<void> finished_future();
  /// Lets messages be processed (handlers run here) and sends partial buffers when idle.
  void yield_now();

  std::size_t mailbox_count() const noexcept { return sent_.size(); }
  engine& transport() const noexcept { return *engine_; }

 private:
  friend class mpi_engine;  // its barrier reports what take_unreported_failure() returns

  // The error this selector terminated with, when a handler threw on some PE and neither wait()
  // nor a barrier has thrown it yet; it counts as reported from now on. Null otherwise. (A
  // finished() future holds the error too, but may never be looked at.)
  std::exception_ptr take_unreported_failure() noexcept;
  [[noreturn]] void reject(const char* call, std::size_t mailbox, int pe, std::size_t bytes) const;
  void check_graph(const mailbox_graph& graph);
  void terminate_mailbox(std::size_t mailbox);
  void run_until_terminated();
  void keep_failure(std::size_t mailbox, int from, std::size_t messages) noexcept;
  void conclude(const std::int64_t* failures);

  struct wave;
  engine* engine_;
  int id_;
  const char* kind_;
  std::uint32_t key_base_;
  std::vector<std::int64_t> sent_;
  std::vector<std::int64_t> processed_;
  std::vector<bool> done_;      // this PE: no more sends from outside handlers
  std::vector<bool> finished_;  // every PE: done, and every message processed
  std::vector<std::vector<std::size_t>> successors_;
  std::vector<std::vector<std::size_t>> predecessors_;
  bool terminated_ = false;
  std::vector<promise<void>> waiters_;  // finished() futures not yet satisfied
  std::unique_ptr<wave> wave_;
  // Handlers that threw on this PE: the first one's exception, where, and how many in all.
  std::exception_ptr first_failure_;
  std::size_t failed_mailbox_ = 0;
  int failed_from_ = 0;
  std::int64_t failures_ = 0;
  // Once terminated: the error of handlers that threw on any PE, and whether a wait() or a
  // barrier has thrown it.
  std::exception_ptr outcome_;
  bool reported_ = false;
};

}  // namespace troupe::pgas::detail
