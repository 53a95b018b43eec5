#include "troupe/pgas/detail/mailbox_set.hpp"

#include <exception>
#include <string>

#include "pgas/mpi_engine.hpp"
#include "troupe/async/error.hpp"
#include "troupe/pgas/world.hpp"

namespace troupe::pgas::detail {

namespace {

// After the three counters per mailbox, a wave carries: handler calls that threw, PEs where one
// threw, and the sum of those PEs' ranks and of their first failing mailboxes. Sums of one rank
// and one mailbox name them exactly when a single PE failed, the case worth naming.
enum failure_field : std::size_t { calls, pes, rank_sum, mailbox_sum, failure_fields };

std::string what_of(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& thrown) {
    return thrown.what();
  } catch (...) {
    return "something that is not a std::exception";
  }
}

std::string counted(std::int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

// Termination detection: waves of MPI_Iallreduce over, per mailbox, (done flags, messages sent,
// messages processed), summed over all PEs; one wave in flight per selector, on a communicator
// of its own so that selectors never mix their collectives. A mailbox has terminated once two
// consecutive waves find it done on every PE with sent == processed and the same counts: with
// counters that only grow, equal counts in two waves mean that no message was in flight between
// them (Mattern's four-counter method). Cost per wave: one allreduce of 24 bytes per mailbox,
// O(log P) latency; termination is seen at most two waves after the last message is processed.
// Each wave also sums the handler failures (see failure_fields): every PE sees the same totals
// in the wave that ends the selector, so every PE's wait() throws, not only the failing PE's.
struct mailbox_set::wave {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<std::int64_t> mine;
  std::vector<std::int64_t> total;
  std::vector<std::int64_t> previous;
  bool has_previous = false;
};

mailbox_set::mailbox_set(world& owner, std::size_t mailboxes, const mailbox_graph& graph,
                         const char* kind)
    : engine_(&owner.transport()),
      id_(engine_->attach(*this)),
      kind_(kind),
      key_base_(static_cast<std::uint32_t>(id_) * max_mailboxes),
      sent_(mailboxes, 0),
      processed_(mailboxes, 0),
      done_(mailboxes, false),
      finished_(mailboxes, false),
      successors_(mailboxes),
      predecessors_(mailboxes),
      wave_(std::make_unique<wave>()) {
  try {
    check_graph(graph);
  } catch (...) {
    engine_->detach(id_);
    throw;
  }
  // Collective: once it returns here, every PE has attached this selector, so no message for it
  // can reach a PE that does not know it yet.
  MPI_Comm_dup(static_cast<mpi_engine&>(*engine_).comm(), &wave_->comm);
  wave_->mine.resize(3 * mailboxes + failure_fields);
  wave_->total.resize(3 * mailboxes + failure_fields);
  wave_->previous.resize(3 * mailboxes + failure_fields);
}

mailbox_set::~mailbox_set() {
  // The typed selector settled it: dispatch() is gone by now.
  if (!terminated_) engine_->abort_job(name() + " was destroyed before it terminated");
  MPI_Comm_free(&wave_->comm);
  engine_->detach(id_);
}

void mailbox_set::settle() noexcept {
  if (!terminated_) {
    if (std::uncaught_exceptions() > 0)
      engine_->abort_job(name() +
                         " destroyed by an exception before it terminated; ending the "
                         "job so that no PE waits for this one");
    // Nothing is lost: leaving scope means done() on this PE, then waiting for the others.
    try {
      mark_roots_done();
      run_until_terminated();
    } catch (const std::exception& failure) {
      engine_->abort_job(name() + " could not finish in its destructor: " + failure.what());
    }
  }
  if (std::exception_ptr failure = take_unreported_failure()) {
    try {
      engine_->keep_unreported(failure);
    } catch (const std::exception& lost) {
      engine_->abort_job(name() + ": a handler's error could not be kept for the world (" +
                         lost.what() + "): " + what_of(failure));
    }
  }
}

std::string mailbox_set::name() const {
  return std::string(kind_) + " " + std::to_string(id_);
}

void mailbox_set::check_graph(const mailbox_graph& graph) {
  const std::size_t count = sent_.size();
  for (auto [from, to] : graph.edges()) {
    if (from >= count || to >= count)
      throw error(errc::out_of_range, name() + ": the mailbox graph has an edge " +
                                          std::to_string(from) + " -> " + std::to_string(to) +
                                          ", but there are only " + std::to_string(count) +
                                          " mailboxes");
    successors_[from].push_back(to);
    predecessors_[to].push_back(from);
  }
  // Depth-first search; a mailbox met again while on the path closes a cycle.
  enum class mark { fresh, on_path, finished };
  std::vector<mark> marks(count, mark::fresh);
  std::vector<std::size_t> path;
  auto visit = [&](auto& self, std::size_t node) -> void {
    marks[node] = mark::on_path;
    path.push_back(node);
    for (std::size_t next : successors_[node]) {
      if (marks[next] == mark::on_path) {
        std::string cycle;
        bool in_cycle = false;
        for (std::size_t member : path) {
          in_cycle = in_cycle || member == next;
          if (in_cycle) cycle += std::to_string(member) + " -> ";
        }
        throw error(errc::invalid_argument, name() + ": the mailbox graph has a cycle, " + cycle +
                                                std::to_string(next) +
                                                "; termination needs a graph without cycles");
      }
      if (marks[next] == mark::fresh) self(self, next);
    }
    path.pop_back();
    marks[node] = mark::finished;
  };
  for (std::size_t node = 0; node < count; ++node)
    if (marks[node] == mark::fresh) visit(visit, node);
}

void mailbox_set::reject(const char* call, std::size_t mailbox, int pe, std::size_t bytes) const {
  const std::string where = name() + "." + call + ": ";
  if (pe < 0 || pe >= engine_->npes())
    throw error(errc::out_of_range, where + "PE " + std::to_string(pe) +
                                        " is out of range; the world has " +
                                        std::to_string(engine_->npes()) + " PEs (0.." +
                                        std::to_string(engine_->npes() - 1) + ")");
  if (bytes > engine_->max_payload())
    throw error(errc::invalid_argument,
                where + "a message of " + std::to_string(bytes) + " bytes is over the limit of " +
                    std::to_string(engine_->max_payload()) +
                    " bytes (the aggregation buffer, world_options::buffer_bytes or "
                    "TROUPE_PGAS_BUFFER_BYTES, less 32 bytes of block header and record size)");
  if (finished_[mailbox])
    throw error(errc::invalid_argument,
                where + "mailbox " + std::to_string(mailbox) +
                    " has terminated on every PE, so the message would be lost. A handler that "
                    "sends to it needs an edge to it in the mailbox graph");
  throw error(errc::invalid_argument,
              where + "mailbox " + std::to_string(mailbox) +
                  " is done on this PE (done() was called, or its predecessors terminated); a "
                  "message sent after done would be lost");
}

void mailbox_set::mark_done(const char* call, std::size_t mailbox) {
  if (!predecessors_[mailbox].empty())
    throw error(errc::invalid_argument,
                name() + "." + call + ": mailbox " + std::to_string(mailbox) +
                    " is fed by mailbox " + std::to_string(predecessors_[mailbox].front()) +
                    " and becomes done by itself once its predecessors terminate");
  done_[mailbox] = true;
  engine_->flush();
}

void mailbox_set::mark_roots_done() {
  for (std::size_t m = 0; m < done_.size(); ++m)
    if (predecessors_[m].empty()) done_[m] = true;
  engine_->flush();
}

bool mailbox_set::roots_done() const noexcept {
  for (std::size_t m = 0; m < done_.size(); ++m)
    if (predecessors_[m].empty() && !done_[m]) return false;
  return true;
}

void mailbox_set::run_until_terminated() {
  if (engine_->in_handler())
    throw error(errc::invalid_argument,
                name() + ".wait: called inside a handler, where it could never return");
  while (!terminated_) engine_->progress(true);
}

void mailbox_set::wait_terminated() {
  run_until_terminated();
  if (outcome_) {
    reported_ = true;
    std::rethrow_exception(outcome_);
  }
}

std::exception_ptr mailbox_set::take_unreported_failure() noexcept {
  if (!terminated_ || !outcome_ || reported_) return nullptr;
  reported_ = true;
  return outcome_;
}

void mailbox_set::keep_failure(std::size_t mailbox, int from, std::size_t messages) noexcept {
  if (failures_ == 0) {
    first_failure_ = std::current_exception();
    failed_mailbox_ = mailbox;
    failed_from_ = from;
  }
  failures_ += static_cast<std::int64_t>(messages);
}

void mailbox_set::yield_now() {
  engine_->progress(true);
}

future<void> mailbox_set::finished_future() {
  promise<void> waiter;
  future<void> result = waiter.get_future();
  if (!terminated_) {
    waiters_.push_back(std::move(waiter));
  } else if (outcome_) {
    waiter.set_exception(outcome_);
  } else {
    waiter.set_value();
  }
  return result;
}

void mailbox_set::advance_termination() {
  wave& current = *wave_;
  if (current.request != MPI_REQUEST_NULL) {
    int complete = 0;
    MPI_Test(&current.request, &complete, MPI_STATUS_IGNORE);
    if (!complete) return;
    const auto npes = static_cast<std::int64_t>(engine_->npes());
    for (std::size_t m = 0; m < finished_.size(); ++m) {
      if (finished_[m]) continue;
      const std::int64_t* now = &current.total[3 * m];
      const std::int64_t* before = &current.previous[3 * m];
      const bool quiet = now[0] == npes && now[1] == now[2];
      const bool stable =
          current.has_previous && before[0] == now[0] && before[1] == now[1] && before[2] == now[2];
      if (quiet && stable) terminate_mailbox(m);
    }
    current.previous = current.total;
    current.has_previous = true;
    if (terminated_) {
      conclude(&current.total[3 * finished_.size()]);
      return;
    }
  }
  for (std::size_t m = 0; m < done_.size(); ++m) {
    current.mine[3 * m] = done_[m] ? 1 : 0;
    current.mine[3 * m + 1] = sent_[m];
    current.mine[3 * m + 2] = processed_[m];
  }
  std::int64_t* failures = &current.mine[3 * done_.size()];
  const bool failed = failures_ > 0;
  failures[calls] = failures_;
  failures[pes] = failed ? 1 : 0;
  failures[rank_sum] = failed ? engine_->pe() : 0;
  failures[mailbox_sum] = failed ? static_cast<std::int64_t>(failed_mailbox_) : 0;
  MPI_Iallreduce(current.mine.data(), current.total.data(), static_cast<int>(current.mine.size()),
                 MPI_INT64_T, MPI_SUM, current.comm, &current.request);
}

void mailbox_set::terminate_mailbox(std::size_t mailbox) {
  finished_[mailbox] = true;
  done_[mailbox] = true;
  for (std::size_t next : successors_[mailbox]) {
    bool ready = true;
    for (std::size_t before : predecessors_[next]) ready = ready && finished_[before];
    if (ready) done_[next] = true;  // on every PE at once: each sees the same wave
  }
  for (bool each : finished_)
    if (!each) return;
  terminated_ = true;
}

// Every message has been processed on every PE, so `failures`, the sums of the wave that ended
// the selector, count every handler that threw. Every PE builds its error from them: the PEs
// where a handler threw with its own message, the others naming where.
void mailbox_set::conclude(const std::int64_t* failures) {
  if (failures[calls] > 0) {
    const std::string in_all =
        " in all, on " + counted(failures[pes], "PE") + "; every other message was processed";
    std::string message;
    if (failures_ > 0)
      message = name() + ", mailbox " + std::to_string(failed_mailbox_) + ", PE " +
                std::to_string(engine_->pe()) + ": a handler threw on a message from PE " +
                std::to_string(failed_from_) + ": " + what_of(first_failure_) + "; " +
                counted(failures_, "handler call") + " threw on this PE, " +
                std::to_string(failures[calls]) + in_all;
    else if (failures[pes] == 1)
      message = name() + ": a handler threw on PE " + std::to_string(failures[rank_sum]) +
                " (mailbox " + std::to_string(failures[mailbox_sum]) +
                "), whose error carries the handler's message; " +
                counted(failures[calls], "handler call") + " threw" + in_all;
    else
      message = name() + ": handlers threw on " + counted(failures[pes], "PE") +
                ", whose errors carry the handlers' messages; " +
                counted(failures[calls], "handler call") + " threw" + in_all;
    outcome_ = std::make_exception_ptr(error(errc::unhandled_exception, message));
  }
  first_failure_ = nullptr;  // its message is in outcome_; the exception may hold user state
  for (promise<void>& waiter : waiters_) {
    if (outcome_)
      waiter.set_exception(outcome_);
    else
      waiter.set_value();
  }
  waiters_.clear();
}

}  // namespace troupe::pgas::detail
