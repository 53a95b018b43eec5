#include "troupe/device/detail/queue_state.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "device/backend.hpp"
#include "device/completion_queue.hpp"
#include "device/device_manager.hpp"
#include "device/device_waits.hpp"
#include "device/issue_command.hpp"
#include "device/retirement.hpp"
#include "troupe/async/work_guard.hpp"
#include "troupe/device/detail/buffer_state.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/device/detail/fresh_memory.hpp"
#include "troupe/device/detail/program_state.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::detail {

namespace {

/// The origin of a command's future. A later command on the same device waits for the
/// command's event on the device instead of on the host; one on the same (in-order) queue needs
/// no wait at all. A launch issued without an event gets one (a marker after it) once someone
/// waits for it.
class command_marker final : public state_origin {
 public:
  // Held, with the device, so that queue_state::ending_with() may hand the queue out.
  explicit command_marker(queue_state& queue) : queue_(&queue), device_(&queue.device()) {}
  ~command_marker() override {
    // The event's last reference: left to the completion thread where the driver charges for
    // calls beside the launching thread (see retirement).
    if (owner_ && owner_->unique() && queue_->prefers_one_launching_thread())
      device_->retired().release_later(std::move(owner_));
  }

  /// The command has its place in the queue's order (submit()): a command submitted to the
  /// queue later runs after it.
  void ordered() noexcept { ordered_.store(true, std::memory_order_release); }
  bool is_ordered() const noexcept { return ordered_.load(std::memory_order_acquire); }
  /// The command failed before it reached the device. Set and read under the queue's issuing
  /// lock, so a later command of the queue that skipped waiting for it sees it when issued.
  void failed_at_issue(std::exception_ptr failure) noexcept { issue_failure_ = std::move(failure); }
  const std::exception_ptr& issue_failure() const noexcept { return issue_failure_; }

  /// Whether someone waits for the command.
  bool wanted() const noexcept { return wanted_.load(std::memory_order_seq_cst); }
  /// The command is on the device, with or without an event of its own. The queue looks at
  /// wanted() again after this (see awaited()).
  void enqueued() noexcept { enqueued_.store(true, std::memory_order_seq_cst); }
  bool is_enqueued() const noexcept { return enqueued_.load(std::memory_order_seq_cst); }

  /// The command's event, or one that ends after it on the same queue. Once only.
  void publish(event_ptr event) noexcept {
    owner_ = std::move(event);
    published_.store(owner_.get(), std::memory_order_release);
  }
  /// The event, or null while there is none yet.
  backend_event* event() const noexcept { return published_.load(std::memory_order_acquire); }
  /// The event to wait for on the device: covers an enqueued command that has none yet. Null
  /// when there is none to wait for.
  backend_event* event_to_wait_for() noexcept {
    if (event() == nullptr && is_enqueued()) queue_->cover();
    return event();
  }
  queue_state* queue() const noexcept { return queue_.get(); }

  void awaited() noexcept override {
    if (event() != nullptr) return;
    // With enqueued() and the queue's look at wanted() after it, in this order on both sides:
    // either the queue sees the wish (before the launch: an event of its own; after it: a
    // cover), or this sees the launch enqueued and covers it. A waiter that comes while the
    // launch is in the driver so never waits for the queue's lock.
    wanted_.store(true, std::memory_order_seq_cst);
    if (is_enqueued()) queue_->cover();
  }

 private:
  intrusive_ptr<queue_state> queue_;
  intrusive_ptr<device_state> device_;
  event_ptr owner_;
  std::atomic<backend_event*> published_{nullptr};
  std::atomic<bool> wanted_{false};
  std::atomic<bool> enqueued_{false};
  std::atomic<bool> ordered_{false};
  std::exception_ptr issue_failure_;
};

std::exception_ptr make_error(errc code, std::string message) {
  return std::make_exception_ptr(error(code, std::move(message)));
}

/// Whether the driver may block in a command of any kind on `backend` (null: a queue made once
/// the system was gone, which issues nothing).
bool may_block_in_any(const backend_queue* backend) noexcept {
  if (backend == nullptr) return false;
  for (auto what : {command::kind::write, command::kind::read, command::kind::fill,
                    command::kind::copy, command::kind::launch})
    if (backend->may_block_in(what)) return true;
  return false;
}

}  // namespace

/// A submitted command, from submission until its future is satisfied. It is what the
/// completion queue holds, so the command's buffers and host memory live until then.
struct queue_state::pending final : command_result {
  command cmd;
  intrusive_ptr<command_result> result;
  intrusive_ptr<command_marker> marker;
  std::vector<event_ptr> device_waits;
  std::vector<intrusive_ptr<state_base>> host_waits;
  std::vector<intrusive_ptr<state_base>> host_order_waits;  // their errors are not taken
  /// Dependencies earlier on this queue, not yet issued when this was submitted: not waited
  /// for, since the queue runs in order, but a failure to issue them is this command's too.
  std::vector<intrusive_ptr<command_marker>> earlier_on_queue;
  std::atomic<std::size_t> outstanding{0};  // host dependencies not ready yet
  /// Set by issue() when the command ended there (failed, or had nothing to do): settle() tells
  /// its future once the queue's lock is released, since continuations may submit to it.
  bool ended_at_issue = false;
  std::exception_ptr failure;
  /// Keeps the actor system's shutdown waiting until the future is settled (see work_guard).
  work_guard work;

  void settle() noexcept {
    if (failure)
      fail(failure);
    else
      complete();
  }

  void complete() noexcept override {
    result->complete();
    work.reset();
  }
  void fail(std::exception_ptr e) noexcept override {
    result->fail(std::move(e));
    work.reset();
  }
  state_base& state() noexcept override { return result->state(); }
};

/// Commands that one event ends: launches issued before it without one, oldest first, and the
/// event's own command, if it has one.
struct queue_state::covered final : command_result {
  std::vector<intrusive_ptr<pending>> ops;

  void complete() noexcept override {
    for (auto& op : ops) op->complete();
  }
  void fail(std::exception_ptr e) noexcept override {
    for (auto& op : ops) op->fail(e);
  }
  state_base& state() noexcept override { return ops.back()->state(); }
};

queue_state::queue_state(device_state& device, bool keep_device,
                         std::unique_ptr<backend_queue> backend)
    : device_(&device),
      device_ref_(keep_device ? intrusive_ptr<device_state>{&device} : nullptr),
      backend_(std::move(backend)),
      may_block_(may_block_in_any(backend_.get())) {}

queue_state::~queue_state() {
  // Every command on the queue has ended by now: each holds the queue (its marker) until the
  // completion queue has seen it end. Still, the backend queue's destructor waits for the device
  // (clFinish), which no worker may call: the completion thread drops it instead.
  if (backend_ && on_scheduler_worker()) device_->retired().release_later(std::move(backend_));
}

bool queue_state::stages_reads_of(std::size_t bytes) const noexcept {
  return backend_->stages_reads_of(bytes);
}

bool queue_state::prefers_one_launching_thread() const noexcept {
  return backend_ && backend_->prefers_one_launching_thread();
}

void queue_state::submit(command cmd, const dependency_list& deps,
                         intrusive_ptr<command_result> result) {
  if (deps.has_invalid)
    return result->fail(make_error(
        errc::no_state, cmd.who() + ": after() got a future without a state (moved from, or "
                                    "consumed by get() or then())"));
  stage_trace::record(stage_trace::point::command_submitted);
  intrusive_ptr<pending> op{new pending, adopt_ref};
  op->cmd = std::move(cmd);
  op->result = std::move(result);
  if (device_->results()) op->work = work_guard{*device_->results()};
  op->marker = intrusive_ptr<command_marker>{new command_marker(*this), adopt_ref};
  op->result->state().set_origin(op->marker);

  if (op->cmd.what == command::kind::copy && &op->cmd.target->device() != device_ &&
      !op->cmd.buffer->device().backend().can_copy_peer(op->cmd.target->device().backend()))
    return submit_staged_copy(*op, deps);

  const void* domain = device_->backend().domain();
  // Where each dependency is waited for: nowhere (done, or earlier on this in-order queue), on
  // the device (an event of this backend), or on the host.
  auto place = [&](const intrusive_ptr<state_base>& dep, bool order_only) {
    auto& host = order_only ? op->host_order_waits : op->host_waits;
    auto* marker = dynamic_cast<command_marker*>(dep->origin().get());
    // Submitted earlier to this in-order queue: ordered before this command already. Drivers
    // do not all skip such a wait cheaply (NVIDIA's OpenCL does not).
    if (marker != nullptr && marker->queue() == this && marker->is_ordered()) {
      if (!order_only && (!marker->is_enqueued() || backend_->wants_same_queue_waits()))
        op->earlier_on_queue.emplace_back(marker);
      return;
    }
    auto* event = marker != nullptr ? marker->event_to_wait_for() : nullptr;
    if (event != nullptr && event->domain() == domain)
      op->device_waits.emplace_back(event);
    else
      host.push_back(dep);
  };
  for (const auto& [dep, order_only] : deps.entries) {
    if (dep->is_ready()) {
      if (!order_only && dep->has_error()) return op->fail(dep->error());
      continue;
    }
    place(dep, order_only);
  }
  const std::size_t host_wait_count = op->host_waits.size() + op->host_order_waits.size();
  op->outstanding.store(host_wait_count, std::memory_order_relaxed);
  {
    std::lock_guard order{order_mutex_};
    deferred_.push_back(op);
    op->marker->ordered();
    last_submitted_.store(op->marker.get(), std::memory_order_release);
  }
  if (host_wait_count == 0) {
    if (!hand_on(*op)) drain();
    return;
  }
  // Host-side dependencies are awaited by continuations (run where the dependency completes),
  // never by a blocked thread.
  auto await = [&](intrusive_ptr<state_base>& dep) {
    dep->attach(make_continuation({}, [self = intrusive_ptr<queue_state>{this}, op] {
      if (op->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) self->drain();
    }));
  };
  for (auto& dep : op->host_waits) await(dep);
  for (auto& dep : op->host_order_waits) await(dep);
}

bool queue_state::hand_on(pending& op) {
  if (op.cmd.what != command::kind::launch || op.marker->wanted()) return false;
  // Else only while the thread is awake for this queue's cover: waking it costs a small CUDA
  // request more than it saves (bench-device's stencil at n = 1000: 1.34 to 1.43 times the raw
  // calls with every launch handed on, 1.04 to 1.18 without).
  if (!prefers_one_launching_thread() && !has_uncovered_.load(std::memory_order_acquire))
    return false;
  // Under the device's open lock: once it is closed, the completion queue may be stopping.
  auto open = device_->hold_open();
  auto* manager = device_->manager();
  if (manager == nullptr ||
      manager->completions().completion_mode() != completion_queue::mode::polling)
    return false;
  manager->completions().issue_later(intrusive_ptr<queue_state>{this});
  return true;
}

intrusive_ptr<queue_state> queue_state::ending_with(const state_base& result) {
  if (result.is_ready()) return nullptr;
  auto* marker = dynamic_cast<const command_marker*>(result.origin().get());
  if (marker == nullptr || !marker->is_ordered()) return nullptr;
  queue_state* queue = marker->queue();
  if (queue->last_submitted_.load(std::memory_order_acquire) != marker) return nullptr;
  return intrusive_ptr<queue_state>{queue};
}

void queue_state::submit_staged_copy(pending& op, const dependency_list& deps) {
  // The host memory between the read and the write: not zeroed, since the read fills it; when
  // large, faulted in by several threads first, which the read would do page by page on one.
  struct staging final : ref_counted {
    explicit staging(std::size_t size) : bytes(new std::byte[size]) {}
    std::unique_ptr<std::byte[]> bytes;
  };
  intrusive_ptr<staging> stage{new staging(op.cmd.bytes), adopt_ref};
  if (op.cmd.bytes >= fresh_memory_threshold)
    device_->fresh().prepare(stage->bytes.get(), op.cmd.bytes);
  auto& source = op.cmd.buffer;
  auto& target = op.cmd.target;
  auto& source_queue = &source->device() == device_ ? *this : source->device().default_queue();
  auto& target_queue = &target->device() == device_ ? *this : target->device().default_queue();

  command read;
  read.what = command::kind::read;
  read.caller = op.cmd.caller + " (staged through the host: read)";
  read.buffer = source;
  read.offset = op.cmd.offset;
  read.bytes = op.cmd.bytes;
  read.host_destination = stage->bytes.get();
  read.keep_alive = stage;
  intrusive_ptr<void_result> read_done{new void_result(device_->results()), adopt_ref};
  dependency_list after_read;
  after_read.add(read_done->shared(), false);
  source_queue.submit(std::move(read), deps, read_done);

  command write;
  write.what = command::kind::write;
  write.caller = op.cmd.caller + " (staged through the host: write)";
  write.buffer = target;
  write.offset = op.cmd.target_offset;
  write.bytes = op.cmd.bytes;
  write.host_source = stage->bytes.get();
  write.keep_alive = stage;
  target_queue.submit(std::move(write), std::move(after_read), op.result);
}

void queue_state::cover() noexcept {
  std::vector<intrusive_ptr<pending>> failed;
  {
    std::unique_lock guard{mutex_, std::defer_lock};
    // Where the copy thread may hold the lock while the driver blocks, a waiter that must not
    // wait does not: the completion thread covers the launches (cover_later) once it is free.
    if (!may_block_ || may_wait_for_device())
      guard.lock();
    else if (!guard.try_lock())
      return;
    if (uncovered_.empty()) return;
    // The queue's lock before the device's, as in issue().
    auto open = device_->hold_open();
    // Once the system is going, its completion queue covers what cover_later() told it of.
    if (auto* manager = device_->manager()) failed = cover_locked(manager->completions());
  }
  for (auto& op : failed) op->settle();
}

void queue_state::cover(completion_queue& completions) noexcept {
  std::vector<intrusive_ptr<pending>> failed;
  {
    std::lock_guard guard{mutex_};
    if (!uncovered_.empty()) failed = cover_locked(completions);
  }
  for (auto& op : failed) op->settle();
}

std::optional<std::chrono::steady_clock::time_point> queue_state::cover_when_quiet(
    completion_queue& completions, std::chrono::steady_clock::time_point now) noexcept {
  std::vector<intrusive_ptr<pending>> failed;
  {
    std::unique_lock lock{mutex_, std::try_to_lock};
    if (!lock) return now + completion_queue::cover_delay;
    if (uncovered_.empty()) return std::nullopt;
    const auto quiet_from = last_uncovered_ + completion_queue::cover_delay;
    if (quiet_from > now) return quiet_from;
    failed = cover_locked(completions);
  }
  for (auto& op : failed) op->settle();
  return std::nullopt;
}

std::vector<intrusive_ptr<queue_state::pending>> queue_state::cover_locked(
    completion_queue& completions) noexcept {
  event_ptr marker;
  try {
    marker = backend_->mark();
  } catch (...) {
    // The backend waited for the queue to drain before it threw, so the launches' memory may
    // go. They fail, since nothing tells whether they ran; after the lock, as in drain().
    auto failed = std::move(uncovered_);
    uncovered_.clear();
    has_uncovered_.store(false, std::memory_order_release);
    for (auto& op : failed) op->failure = std::current_exception();
    return failed;
  }
  hand_over_uncovered(std::move(marker), completions);
  return {};
}

void queue_state::hand_over_uncovered(event_ptr event, completion_queue& completions) noexcept {
  intrusive_ptr<covered> batch{new covered, adopt_ref};
  batch->ops = std::move(uncovered_);
  uncovered_.clear();
  has_uncovered_.store(false, std::memory_order_release);
  for (auto& op : batch->ops)
    if (op->marker->event() == nullptr) op->marker->publish(event);
  completions.watch(std::move(event), std::move(batch));
}

void queue_state::lock_for(issuer who, std::unique_lock<std::mutex>& lock) {
  if (!may_block_ || who == issuer::copy_thread || may_wait_for_device()) return lock.lock();
  if (lock.try_lock()) return;
  // Held, maybe by the copy thread while the driver blocks: that thread issues what is ready,
  // once it has the lock.
  if (hand_to_copy_thread()) return;
  lock.lock();  // the system is gone: nothing blocks in the driver any more
}

bool queue_state::issues(issuer who, const pending& op, bool& hand_over) const noexcept {
  // A program's own thread issues such a command itself, as it would without troupe: a hand-over
  // would only add the copy thread's wake-up to the read.
  if (may_block_ && who != issuer::copy_thread && backend_->may_block_in(op.cmd.what) &&
      !may_wait_for_device()) {
    hand_over = true;
    return false;
  }
  // The completion thread issues launches only: it must go on polling. A command behind them
  // is issued by its submitter, which waits for this lock meanwhile, or by the copy thread.
  return who != issuer::completion || op.cmd.what == command::kind::launch;
}

bool queue_state::hand_to_copy_thread() {
  return device_->issue_on_copy_thread(intrusive_ptr<queue_state>{this});
}

void queue_state::drain(issuer who, completion_queue* completions) {
  std::unique_lock issuing{mutex_, std::defer_lock};
  lock_for(who, issuing);
  if (!issuing.owns_lock()) return;  // handed to the copy thread
  bool hand_over = false;
  const auto ready = [&] {
    if (deferred_.empty()) return false;
    const pending& front = *deferred_.front();
    return front.outstanding.load(std::memory_order_acquire) == 0 && issues(who, front, hand_over);
  };
  std::vector<intrusive_ptr<pending>> ended;
  bool held = false;  // the last launch issued is not flushed yet
  for (;;) {
    intrusive_ptr<pending> op;
    bool more = false;
    {
      std::lock_guard order{order_mutex_};
      if (!ready()) break;
      op = std::move(deferred_.front());
      deferred_.pop_front();
      more = ready();
    }
    if (auto how = issue(*op, completions, more, ended); how != issued::nothing)
      held = how == issued::held;
    if (op->ended_at_issue) {
      if (op->failure) op->marker->failed_at_issue(op->failure);
      ended.push_back(std::move(op));
    }
  }
  if (held) backend_->flush();
  issuing.unlock();
  for (auto& op : ended) op->settle();
  // Once the system is gone, there is no copy thread, and nothing blocks any more.
  if (hand_over && !hand_to_copy_thread()) drain(issuer::copy_thread, completions);
}

queue_state::issued queue_state::issue(pending& op, completion_queue* completions, bool more,
                                       std::vector<intrusive_ptr<pending>>& ended) noexcept {
  try {
    for (auto& dep : op.host_waits) {
      if (dep->has_error()) {
        op.ended_at_issue = true;
        op.failure = dep->error();
        return issued::nothing;
      }
    }
    for (auto& earlier : op.earlier_on_queue) {
      if (earlier->issue_failure()) {
        op.ended_at_issue = true;
        op.failure = earlier->issue_failure();
        return issued::nothing;
      }
    }
    auto open = device_->hold_open();
    if (completions == nullptr && device_->manager() != nullptr)
      completions = &device_->manager()->completions();
    if (completions == nullptr || !backend_)
      throw error(errc::system_gone, op.cmd.who() + ": device '" + device_->info().name +
                                         "' belongs to an actor system that is gone");
    std::vector<backend_event*> waits;
    waits.reserve(op.device_waits.size());
    for (auto& e : op.device_waits) waits.push_back(e.get());
    if (backend_->wants_same_queue_waits())
      for (auto& earlier : op.earlier_on_queue)
        if (auto* event = earlier->event()) waits.push_back(event);

    const bool own_event = op.cmd.what != command::kind::launch || op.marker->wanted() ||
                           uncovered_.size() + 1 >= most_uncovered;
    stage_trace::record(stage_trace::point::command_issuing);
    if (may_block_ && backend_->may_block_in(op.cmd.what)) device_->before_blocking_issue();
    // A queue that issues several at once flushes after the last (drain).
    const auto marking = own_event ? launch_event::own
                         : more    ? launch_event::held
                                   : launch_event::none;
    event_ptr event = issue_command(*device_, *backend_, op.cmd, waits, marking);
    stage_trace::record(stage_trace::point::command_enqueued);
    if (!event && own_event) {  // nothing to do on the device (an empty range)
      op.ended_at_issue = true;
      return issued::nothing;
    }
    op.marker->enqueued();
    const auto result = marking == launch_event::held ? issued::held : issued::flushed;
    if (!event) {
      uncovered_.emplace_back(&op);
      // Someone began to wait while the driver took the launch (see command_marker::awaited).
      if (op.marker->wanted()) {
        auto failed = cover_locked(*completions);
        ended.insert(ended.end(), failed.begin(), failed.end());
        return issued::flushed;
      }
      if (uncovered_.size() == 1) {
        completions->cover_later(intrusive_ptr<queue_state>{this});
        has_uncovered_.store(true, std::memory_order_release);
      }
      last_uncovered_ = std::chrono::steady_clock::now();
      return result;
    }
    op.marker->publish(event);
    if (uncovered_.empty()) {
      completions->watch(std::move(event), intrusive_ptr<command_result>{&op});
      return result;
    }
    uncovered_.emplace_back(&op);
    hand_over_uncovered(std::move(event), *completions);
    return result;
  } catch (...) {
    op.ended_at_issue = true;
    op.failure = std::current_exception();
    return issued::nothing;
  }
}

}  // namespace troupe::detail
