#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <utility>

#include "troupe/async/error.hpp"
#include "troupe/pgas/detail/mailbox_set.hpp"
#include "troupe/pgas/mailbox_graph.hpp"
#include "troupe/pgas/message.hpp"
#include "troupe/pgas/world.hpp"

namespace troupe::pgas {

/// N mailboxes partitioned over all PEs, each with a handler `(message, sender_pe)`. Messages
/// are aggregated per destination; handlers run on the receiving PE one at a time, inside
/// send() (when a buffer fills), yield(), wait() and world::barrier(), never concurrently with
/// the user's code, so they need no locks. Create it on every PE, in the same order.
template <std::size_t N, class Msg>
class selector : public detail::mailbox_set {
  static_assert(N >= 1 && N <= detail::max_mailboxes, "a selector has 1 to 256 mailboxes");

 public:
  // -- member types ---------------------------------------------------------

  using message_type = Msg;
  using traits = message_traits<Msg>;
  /// A mailbox's handler: the message (a span or string_view for variable-size messages) and
  /// the PE that sent it.
  using handler = std::function<void(typename traits::view, int)>;

  // -- constructors ---------------------------------------------------------

  /// A selector whose mailbox m is handled by handlers[m]; by default mailbox m feeds m+1.
  selector(world& owner, std::array<handler, N> handlers,
           const mailbox_graph& graph = mailbox_graph::linear(N))
      : selector(owner, std::move(handlers), graph, "selector") {}

  /// Leaving scope means done() on this PE; it waits until the selector has terminated.
  ~selector() override { settle(); }

  // -- operations -----------------------------------------------------------

  /// Sends `message` to `mailbox` on PE `pe`. Throws troupe::error for a PE out of range, a
  /// mailbox that is done, or a message over the size limit.
  void send(std::size_t mailbox, int pe, typename traits::argument message) {
    check_mailbox("send", mailbox);
    const std::size_t bytes = traits::bytes(message);
    traits::write(reserve("send", mailbox, pe, bytes, is_variable_size<Msg>), message);
  }

  /// No more messages to `mailbox` from this PE's code outside the handlers. Only for
  /// mailboxes without predecessors; the others become done by themselves.
  void done(std::size_t mailbox) {
    check_mailbox("done", mailbox);
    mark_done("done", mailbox);
  }

  /// done() on every mailbox without predecessors.
  void done() { mark_roots_done(); }

  /// Lets this PE's handlers run; sends partial buffers when there is nothing to receive.
  void yield() { yield_now(); }

  /// Blocks, running handlers, until every mailbox has terminated on every PE. Throws
  /// troupe::error (unhandled_exception) on every PE if a handler threw on any: on the PE where
  /// it threw with the handler's message, elsewhere naming that PE. The other messages were
  /// processed all the same.
  void wait() { wait_terminated(); }

  /// Completes once every mailbox has terminated everywhere, with wait()'s error if a handler
  /// threw. Only progress (send, yield, wait, barrier) makes it so: a thread that only waits on
  /// the future waits forever.
  future<void> finished() { return finished_future(); }

  /// Called by the engine for each block of fixed-size messages.
  void dispatch_block(std::size_t mailbox, const std::byte* records, std::size_t record_bytes,
                      std::size_t count, int from, std::uint64_t code) override {
    if constexpr (is_variable_size<Msg>) {
      mailbox_set::dispatch_block(mailbox, records, record_bytes, count, from, code);
    } else {
      handler& process = handlers_[mailbox];
      for (std::size_t index = 0; index < count; ++index)
        guarded(mailbox, from, [&] {
          traits::deliver(process, records + index * detail::padded(sizeof(Msg)), from);
        });
    }
  }

  /// Called by the engine for each message.
  void dispatch(std::size_t mailbox, const std::byte* payload, std::size_t bytes, int from,
                std::uint64_t) override {
    guarded(mailbox, from, [&] {
      if constexpr (is_variable_size<Msg>)
        traits::deliver(handlers_[mailbox], payload, bytes, from);
      else
        traits::deliver(handlers_[mailbox], payload, from);
    });
  }

 protected:
  selector(world& owner, std::array<handler, N> handlers, const mailbox_graph& graph,
           const char* kind)
      : mailbox_set(checked(owner, handlers, kind), N, graph, kind),
        handlers_(std::move(handlers)) {}

 private:
  void check_mailbox(const char* call, std::size_t mailbox) const {
    if (mailbox >= N) reject_mailbox(call, mailbox);
  }
  [[noreturn]] void reject_mailbox(const char* call, std::size_t mailbox) const {
    throw error(errc::out_of_range,
                name() + "." + call + ": mailbox " + std::to_string(mailbox) +
                    " does not exist; this selector has " + std::to_string(N) +
                    (N == 1 ? " mailbox (0)" : " mailboxes (0.." + std::to_string(N - 1) + ")"));
  }
  // Before the base is built: a selector that throws after it would have to terminate first.
  static world& checked(world& owner, const std::array<handler, N>& handlers, const char* kind) {
    for (std::size_t m = 0; m < N; ++m)
      if (!handlers[m])
        throw error(errc::invalid_argument,
                    std::string(kind) + ": mailbox " + std::to_string(m) + " has no handler");
    return owner;
  }

  std::array<handler, N> handlers_;
};

/// A selector with one mailbox: send(pe, message), done(), wait().
template <class Msg>
class actor : public selector<1, Msg> {
  using base = selector<1, Msg>;

 public:
  using typename base::handler;
  using typename base::traits;

  /// An actor whose messages `handler` processes, as `(message, sender_pe)`.
  actor(world& owner, handler process)
      : base(owner, std::array<handler, 1>{std::move(process)}, mailbox_graph::none(), "actor") {}

  using base::send;
  /// Sends `message` to PE `pe`.
  void send(int pe, typename traits::argument message) { base::send(0, pe, message); }
};

}  // namespace troupe::pgas
