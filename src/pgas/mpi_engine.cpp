#include "pgas/mpi_engine.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "support/mpi/mpi_owner.hpp"
#include "troupe/async/error.hpp"

namespace troupe::pgas::detail {

namespace {

constexpr int data_tag = 1;
// Receives posted at once: enough to keep a few buffers arriving while one is processed.
constexpr std::size_t posted_receives = 8;
// Buffers in flight before a sender outside a handler waits (running handlers meanwhile).
constexpr std::size_t in_flight_per_pe = 4;
// bench-pgas aggregation_buffer (bench/results/cpu-2core/pgas, histogram): 16 KiB 136, 64 KiB 152,
// 256 KiB 153 M updates/s/PE; 256 KiB would cost four times the memory for nothing.
constexpr std::size_t default_buffer_bytes = 64 * 1024;
constexpr std::size_t smallest_buffer_bytes = 64;

std::size_t choose_buffer_bytes(std::size_t requested) {
  if (requested == 0) {
    if (const char* text = std::getenv("TROUPE_PGAS_BUFFER_BYTES"); text && *text) {
      char* end = nullptr;
      const unsigned long long value = std::strtoull(text, &end, 10);
      if (*end != '\0' || value == 0)
        throw error(errc::invalid_argument,
                    std::string("TROUPE_PGAS_BUFFER_BYTES: expected a positive number of bytes, "
                                "found '") +
                        text + "'");
      requested = static_cast<std::size_t>(value);
    } else {
      requested = default_buffer_bytes;
    }
  }
  if (requested < smallest_buffer_bytes || requested > (std::size_t{1} << 30))
    throw error(errc::invalid_argument, "pgas::world: an aggregation buffer of " +
                                            std::to_string(requested) +
                                            " bytes is outside 64 bytes .. 1 GiB");
  return padded(requested);
}

}  // namespace

mpi_engine::mpi_engine(int* argc, char*** argv, std::size_t buffer_bytes) {
  buffer_bytes_ = choose_buffer_bytes(buffer_bytes);
  troupe::detail::initialize_mpi(argc, argv);  // shared with the net layer
  // A communicator of our own: the user's MPI traffic and ours never match each other.
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &pe_);
  MPI_Comm_size(comm_, &npes_);
  out_.resize(static_cast<std::size_t>(npes_));
  current_.resize(static_cast<std::size_t>(npes_));
  receives_.resize(posted_receives);
  for (buffer& receive : receives_) {
    receive.data = fresh_block();
    MPI_Irecv(receive.data.get(), static_cast<int>(buffer_bytes_), MPI_BYTE, MPI_ANY_SOURCE,
              data_tag, comm_, &receive.request);
  }
}

mpi_engine::~mpi_engine() {
  for (mailbox_set* set : selectors_)
    if (set != nullptr)
      abort_job("pgas::world destroyed while " + set->name() +
                " still exists; destroy selectors before their world");
  if (std::uncaught_exceptions() > 0)
    abort_job(
        "pgas::world destroyed by an exception; ending the job so that no PE waits "
        "for this one");
  // A destructor cannot throw, and dropping the error would let a wrong result pass.
  if (!unreported_.empty()) {
    std::string what;
    try {
      std::rethrow_exception(unreported_.front());
    } catch (const std::exception& failure) {
      what = failure.what();
    }
    abort_job(
        "pgas::world destroyed while a handler's error was not reported (no wait(), "
        "barrier() or collective after its selector ended): " +
        what +
        (unreported_.size() > 1 ? " (and " + std::to_string(unreported_.size() - 1) + " more)"
                                : std::string()));
  }
  // Every selector has terminated, so every buffer sent was received: the sends complete.
  for (buffer& sent : in_flight_) MPI_Wait(&sent.request, MPI_STATUS_IGNORE);
  MPI_Barrier(comm_);
  for (buffer& receive : receives_) {
    MPI_Cancel(&receive.request);
    MPI_Wait(&receive.request, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&comm_);
}

std::unique_ptr<std::byte[]> mpi_engine::fresh_block() {
  if (!spare_.empty()) {
    auto block = std::move(spare_.back());
    spare_.pop_back();
    return block;
  }
  return std::unique_ptr<std::byte[]>(new std::byte[buffer_bytes_]);
}

void mpi_engine::ship(int dest) {
  const auto d = static_cast<std::size_t>(dest);
  outgoing& out = out_[d];
  if (out.data != nullptr && out.used == 0) return;  // nothing to send; keep the block
  if (out.data != nullptr) {
    out.seal();
    buffer sent{std::move(current_[d]), MPI_REQUEST_NULL};
    MPI_Isend(sent.data.get(), static_cast<int>(out.used), MPI_BYTE, dest, data_tag, comm_,
              &sent.request);
    in_flight_.push_back(std::move(sent));
  }
  current_[d] = fresh_block();
  out.data = current_[d].get();
  out.used = 0;
  // Outside handlers, a full buffer is the moment to receive (handlers run here) and to let
  // the sends drain. Inside handlers nothing blocks: memory grows instead, so two PEs whose
  // handlers send to each other cannot deadlock.
  if (!in_handler() && !progressing_) {
    progress(false);
    complete_sends(true);
  }
}

void mpi_engine::flush() {
  for (int dest = 0; dest < npes_; ++dest)
    if (out_[static_cast<std::size_t>(dest)].used > 0) ship(dest);
}

void mpi_engine::complete_sends(bool block_until_below_limit) {
  const std::size_t limit = in_flight_per_pe * static_cast<std::size_t>(npes_);
  for (;;) {
    std::size_t kept = 0;
    for (buffer& sent : in_flight_) {
      int complete = 0;
      MPI_Test(&sent.request, &complete, MPI_STATUS_IGNORE);
      if (complete)
        spare_.push_back(std::move(sent.data));
      else
        in_flight_[kept++] = std::move(sent);
    }
    in_flight_.resize(kept);
    if (!block_until_below_limit || in_flight_.size() <= limit) return;
    progressing_ = true;
    receive_some();  // what our peers send us may be what lets them receive from us
    progressing_ = false;
  }
}

bool mpi_engine::receive_some() {
  bool received = false;
  for (;;) {
    buffer& receive = receives_[next_receive_];
    int complete = 0;
    MPI_Status status;
    MPI_Test(&receive.request, &complete, &status);
    if (!complete) return received;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    deliver(receive.data.get(), static_cast<std::size_t>(bytes), status.MPI_SOURCE);
    MPI_Irecv(receive.data.get(), static_cast<int>(buffer_bytes_), MPI_BYTE, MPI_ANY_SOURCE,
              data_tag, comm_, &receive.request);
    // Receives posted for any source match in posting order; handling them in that order keeps
    // each sender's messages in order.
    next_receive_ = (next_receive_ + 1) % receives_.size();
    received = true;
  }
}

void mpi_engine::deliver(const std::byte* data, std::size_t bytes, int from) {
  auto damaged = [&](const char* what) {
    abort_job("a damaged aggregation buffer arrived from PE " + std::to_string(from) + ": " + what);
  };
  std::size_t at = 0;
  while (at < bytes) {
    block_header header;
    if (bytes - at < sizeof header) damaged("a block header is cut off");
    std::memcpy(&header, data + at, sizeof header);
    at += sizeof header;
    const std::size_t id = header.key / max_mailboxes;
    const std::size_t mailbox = header.key % max_mailboxes;
    mailbox_set* set = id < selectors_.size() ? selectors_[id] : nullptr;
    if (set == nullptr)
      abort_job("a message from PE " + std::to_string(from) + " is for selector " +
                std::to_string(id) +
                ", which this PE has not created or has destroyed. Every PE creates the same "
                "selectors in the same order, and destroys each only after wait()");
    // Handlers run guarded (mailbox_set::guarded): what they throw stays with the selector.
    ++handler_depth_;
    if (header.record_bytes != variable_size) {
      const std::size_t stride = padded(header.record_bytes);
      if (stride == 0 || header.count > (bytes - at) / stride) damaged("a block is cut off");
      set->dispatch_block(mailbox, data + at, header.record_bytes, header.count, from, header.code);
      at += stride * header.count;
    } else {
      for (std::uint32_t record = 0; record < header.count; ++record) {
        std::uint64_t size = 0;
        if (bytes - at < sizeof size) damaged("a record size is cut off");
        std::memcpy(&size, data + at, sizeof size);
        at += sizeof size;
        if (size > bytes - at) damaged("a record is cut off");
        set->dispatch(mailbox, data + at, static_cast<std::size_t>(size), from, header.code);
        at += padded(static_cast<std::size_t>(size));
      }
    }
    --handler_depth_;
    set->count_processed(mailbox, header.count);
  }
}

void mpi_engine::progress(bool flush_when_idle) {
  if (progressing_ || in_handler()) return;  // handlers never nest
  progressing_ = true;
  const bool received = receive_some();
  complete_sends(false);
  // By index: a finished() continuation may create a selector, which appends to the list.
  for (std::size_t index = 0; index < selectors_.size(); ++index) {
    mailbox_set* set = selectors_[index];
    if (set != nullptr && !set->terminated()) set->advance_termination();
  }
  progressing_ = false;
  if (!received && flush_when_idle) flush();
}

void mpi_engine::wait_for(MPI_Request& request) {
  for (;;) {
    int complete = 0;
    MPI_Test(&request, &complete, MPI_STATUS_IGNORE);
    if (complete) return;
    progress(true);
  }
}

int mpi_engine::attach(mailbox_set& set) {
  if (selectors_.size() >= (std::size_t{1} << 24))
    throw error(errc::invalid_argument, "pgas::world: more than 2^24 selectors");
  selectors_.push_back(&set);
  return static_cast<int>(selectors_.size() - 1);
}

void mpi_engine::detach(int id) noexcept {
  selectors_[static_cast<std::size_t>(id)] = nullptr;
}

void mpi_engine::keep_unreported(std::exception_ptr failure) {
  unreported_.push_back(std::move(failure));
}

void mpi_engine::throw_unreported(bool of_selectors) {
  if (of_selectors)
    for (mailbox_set* set : selectors_)
      if (set != nullptr)
        if (std::exception_ptr failure = set->take_unreported_failure())
          unreported_.push_back(std::move(failure));
  if (unreported_.empty()) return;
  std::exception_ptr first = std::move(unreported_.front());
  unreported_.erase(unreported_.begin());
  std::rethrow_exception(first);
}

void mpi_engine::abort_job(const std::string& message) const noexcept {
  std::fprintf(stderr, "troupe pgas: PE %d of %d: %s; aborting the job\n", pe_, npes_,
               message.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_ != MPI_COMM_NULL ? comm_ : MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace troupe::pgas::detail
