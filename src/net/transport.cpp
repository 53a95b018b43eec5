#include "net/transport.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "troupe/async/error.hpp"
#include "troupe/support/thread_name.hpp"

namespace troupe::net::detail {

namespace {

// Receives posted at once, each of one buffer: enough to keep buffers arriving from several
// nodes while one is handled.
constexpr std::size_t posted_receives = 8;
// MPI counts in int: larger blocks go in pieces of this size.
constexpr std::size_t largest_piece = std::size_t{1} << 30;
// The progress thread's idle steps: polling (where the host has a core to spare for it), then
// yielding, then naps (see run).
constexpr auto spin_time = std::chrono::microseconds{50};
constexpr auto yield_time = std::chrono::milliseconds{2};
constexpr auto nap_time = std::chrono::microseconds{50};
// Large messages from one node received at once, and the bytes their segments may hold before
// the next header is read (the first is always read).
constexpr std::size_t max_large_in_flight = 16;
constexpr std::uint64_t max_large_bytes = std::uint64_t{1} << 30;
// Between two looks for the end of the job while some node is still busy.
constexpr auto round_pause = std::chrono::microseconds{200};

void post_pieces(bool sending, std::byte* data, std::size_t bytes, int peer, int tag, MPI_Comm comm,
                 std::vector<MPI_Request>& requests) {
  do {
    const std::size_t piece = std::min(bytes, largest_piece);
    MPI_Request request;
    if (sending)
      MPI_Isend(data, static_cast<int>(piece), MPI_BYTE, peer, tag, comm, &request);
    else
      MPI_Irecv(data, static_cast<int>(piece), MPI_BYTE, peer, tag, comm, &request);
    requests.push_back(request);
    data += piece;
    bytes -= piece;
  } while (bytes > 0);
}

bool all_done(std::vector<MPI_Request>& requests) {
  int done = 0;
  MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
  return done != 0;
}

}  // namespace

transport::transport(MPI_Comm comm, frame_handler& handler, std::size_t buffer_bytes, bool spin,
                     executor& workers)
    : comm_(comm), handler_(handler), buffer_bytes_(buffer_bytes), spin_(spin), workers_(workers) {
  MPI_Comm_rank(comm_, &self_);
  MPI_Comm_size(comm_, &size_);
  for (int i = 0; i < size_; ++i) {
    outboxes_.push_back(std::make_unique<outbox>());
    outboxes_.back()->current.reserve(buffer_bytes_);
  }
  sources_ = std::vector<source_state>(static_cast<std::size_t>(size_));  // not movable
  receives_.resize(posted_receives);
}

transport::~transport() {
  if (thread_.joinable()) stop();
}

void transport::start() {
  for (auto& slot : receives_) {
    slot.buffer.resize(buffer_bytes_);
    post_receive(slot);
  }
  thread_ = std::thread{[this] { run(); }};
  troupe::detail::name_thread(thread_, "troupe-net");
}

void transport::post_receive(receive_slot& slot) {
  MPI_Irecv(slot.buffer.data(), static_cast<int>(buffer_bytes_), MPI_BYTE, MPI_ANY_SOURCE,
            buffer_tag, comm_, &slot.request);
}

// -- sending (any thread) -----------------------------------------------------

void transport::append(outbox& box, frame_kind kind, std::size_t payload_bytes) {
  const std::size_t frame = frame_header_bytes + payload_bytes;
  if (box.current.size() + frame > buffer_bytes_) {
    box.full.push_back(std::move(box.current));
    box.current = std::vector<std::byte>{};
    box.current.reserve(buffer_bytes_);
  }
  const std::size_t at = box.current.size();
  box.current.resize(at + frame);
  box.appended.store(box.appended.load(std::memory_order_relaxed) + frame,
                     std::memory_order_release);
  std::byte* out = box.current.data() + at;
  put(out, static_cast<std::uint32_t>(payload_bytes));
  put(out, kind);
}

bool transport::send_frame(node_id to, frame_kind kind, std::size_t payload_bytes,
                           const std::function<void(std::byte*)>& write) {
  auto& box = *outboxes_[to];
  {
    std::lock_guard guard{box.mutex};
    if (box.closed) return false;
    append(box, kind, payload_bytes);
    write(box.current.data() + box.current.size() - payload_bytes);
    frames_sent_.fetch_add(1, std::memory_order_relaxed);
  }
  wake();
  return true;
}

bool transport::send_large(node_id to, std::vector<std::byte> header,
                           std::vector<std::span<const std::byte>> segments, message keep_alive) {
  const std::size_t announcement =
      sizeof(std::uint64_t) + sizeof(std::uint32_t) + segments.size() * sizeof(std::uint64_t);
  if (announcement > max_frame_payload())
    throw error(errc::limit_reached,
                "net: a message of " + std::to_string(segments.size()) + " large blocks; at most " +
                    std::to_string((max_frame_payload() - 12) / 8) + " fit one message");
  auto& box = *outboxes_[to];
  {
    std::lock_guard guard{box.mutex};
    if (box.closed) return false;
    append(box, frame_kind::large, announcement);
    std::byte* out = box.current.data() + box.current.size() - announcement;
    put(out, static_cast<std::uint64_t>(header.size()));
    put(out, static_cast<std::uint32_t>(segments.size()));
    for (auto segment : segments) put(out, static_cast<std::uint64_t>(segment.size()));
    box.large.push_back({std::move(header), std::move(segments), std::move(keep_alive)});
    frames_sent_.fetch_add(1, std::memory_order_relaxed);
  }
  wake();
  return true;
}

void transport::wake() noexcept {
  pending_output_.store(true, std::memory_order_release);
  if (sleeping_.load(std::memory_order_acquire)) {
    std::lock_guard guard{sleep_mutex_};
    sleep_cv_.notify_one();
  }
}

void transport::begin_draining() noexcept {
  draining_.store(true, std::memory_order_release);
  wake();
}

// -- the progress thread ------------------------------------------------------

void transport::run() {
  using clock = std::chrono::steady_clock;
  auto last_busy = clock::now();
  clock::time_point work_expected_until{};
  while (!final_done_) {
    bool traffic = poll_receives();
    traffic |= poll_large();
    traffic |= ship(stopping_.load(std::memory_order_acquire));
    const bool busy = traffic | complete_sends() | poll_termination();
    const auto now = clock::now();
    // While messages flow, an answer is likely to follow soon: a worker that stands by runs it
    // at once, where waking a parked one takes tens of microseconds. Renewed only when half
    // the time has passed: a renewal may wake a worker, and this thread must not pay for one
    // per message.
    if (traffic && spin_ && now + yield_time / 2 > work_expected_until) {
      work_expected_until = now + yield_time;
      workers_.expect_work_until(work_expected_until);
    }
    if (busy) {
      last_busy = now;
      continue;
    }
    // A transfer in flight moves only while both sides call MPI: no naps until it is done.
    if (!sends_.empty() || large_receives_waiting()) {
      if (!spin_) std::this_thread::yield();
      continue;
    }
    // Idle: poll on for a while (an answer is often on its way), then yield the core, then nap
    // in short sleeps that a sender cuts short. MPI has no wait that a sender could interrupt.
    const auto idle = now - last_busy;
    if (spin_ && idle < spin_time) continue;
    if (idle < yield_time) {
      std::this_thread::yield();
      continue;
    }
    std::unique_lock lock{sleep_mutex_};
    sleeping_.store(true, std::memory_order_release);
    if (!pending_output_.load(std::memory_order_acquire)) sleep_cv_.wait_for(lock, nap_time);
    sleeping_.store(false, std::memory_order_release);
  }
}

std::vector<std::byte> transport::fresh_buffer() {
  if (spare_.empty()) {
    std::vector<std::byte> buffer;
    buffer.reserve(buffer_bytes_);
    return buffer;
  }
  auto buffer = std::move(spare_.back());
  spare_.pop_back();
  buffer.clear();
  return buffer;
}

bool transport::ship(bool everything) {
  pending_output_.store(false, std::memory_order_release);
  bool busy = false;
  for (int to = 0; to < size_; ++to) {
    auto& box = *outboxes_[static_cast<std::size_t>(to)];
    const std::uint64_t appended = box.appended.load(std::memory_order_acquire);
    if (appended == box.shipped) continue;
    busy = true;
    // What was appended goes once its writers paused (nothing new since the last look) or it
    // fills half a buffer: alone, a message waits one turn of this loop; under load, many share
    // a buffer. Until then the box is not locked, so that its writers need not wait.
    const bool paused = appended == box.seen;
    box.seen = appended;
    if (!everything && !paused && appended - box.shipped < buffer_bytes_ / 2) continue;
    std::deque<std::vector<std::byte>> full;
    std::deque<outbox::large_send> large;
    {
      std::lock_guard guard{box.mutex};
      if (!box.current.empty()) {
        box.full.push_back(std::move(box.current));
        box.current = fresh_buffer();
      }
      box.shipped = box.appended.load(std::memory_order_relaxed);
      box.seen = box.shipped;
      full.swap(box.full);
      large.swap(box.large);
    }
    for (auto& buffer : full) {
      send_in_flight sent;
      sent.buffer = std::move(buffer);
      sent.requests.resize(1);
      MPI_Isend(sent.buffer.data(), static_cast<int>(sent.buffer.size()), MPI_BYTE, to, buffer_tag,
                comm_, &sent.requests[0]);
      sends_.push_back(std::move(sent));
    }
    for (auto& item : large) {
      send_in_flight sent;
      sent.header = std::move(item.header);
      sent.keep_alive = std::move(item.keep_alive);
      post_pieces(true, sent.header.data(), sent.header.size(), to, header_tag, comm_,
                  sent.requests);
      for (auto segment : item.segments)
        post_pieces(true, const_cast<std::byte*>(segment.data()), segment.size(), to, segment_tag,
                    comm_, sent.requests);
      sends_.push_back(std::move(sent));
    }
  }
  return busy;
}

bool transport::complete_sends() {
  bool busy = false;
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (!all_done(it->requests)) {
      ++it;
      continue;
    }
    busy = true;
    if (it->buffer.capacity() == buffer_bytes_ && spare_.size() < 64)
      spare_.push_back(std::move(it->buffer));
    it = sends_.erase(it);
  }
  return busy;
}

bool transport::poll_receives() {
  // Receives match in the order they were posted; handled in that order, buffers from one node
  // keep theirs.
  bool busy = false;
  for (;;) {
    auto& slot = receives_[next_receive_];
    int done = 0;
    MPI_Status status;
    MPI_Test(&slot.request, &done, &status);
    if (!done) return busy;
    busy = true;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    const auto from = static_cast<node_id>(status.MPI_SOURCE);
    auto& source = sources_[from];
    const std::byte* at = slot.buffer.data();
    const std::byte* end = at + bytes;
    while (end - at >= static_cast<std::ptrdiff_t>(frame_header_bytes)) {
      const auto payload = get<std::uint32_t>(at);
      const auto kind = get<frame_kind>(at);
      if (payload > static_cast<std::size_t>(end - at))
        abort_job("net: a damaged buffer from node " + std::to_string(from) + ": a frame of " +
                  std::to_string(payload) + " bytes where " + std::to_string(end - at) +
                  " are left");
      std::span<const std::byte> body{at, payload};
      at += payload;
      if (kind == frame_kind::large) {
        source.queue.push_back({kind, {}, announce_large(from, body)});
        ++source.large_waiting;
      } else if (!source.queue.empty())
        source.queue.push_back({kind, std::vector<std::byte>(body.begin(), body.end()), {}});
      else
        handle(from, kind, body);
    }
    post_receive(slot);
    next_receive_ = (next_receive_ + 1) % receives_.size();
  }
}

void transport::handle(node_id from, frame_kind kind, std::span<const std::byte> payload) {
  handler_.on_frame(from, kind, payload);
  ++frames_handled_;
}

auto transport::announce_large(node_id from, std::span<const std::byte> announcement)
    -> std::unique_ptr<large_receive> {
  const std::byte* at = announcement.data();
  constexpr std::size_t fixed = sizeof(std::uint64_t) + sizeof(std::uint32_t);
  if (announcement.size() < fixed)
    abort_job("net: a damaged announcement of a large message from node " + std::to_string(from));
  const auto header_bytes = get<std::uint64_t>(at);
  const auto count = get<std::uint32_t>(at);
  if (announcement.size() != fixed + std::size_t{count} * sizeof(std::uint64_t))
    abort_job("net: a damaged announcement of a large message from node " + std::to_string(from) +
              ": " + std::to_string(count) + " blocks in " + std::to_string(announcement.size()) +
              " bytes");
  auto large = std::make_unique<large_receive>();
  large->segment_bytes.resize(count);
  for (auto& bytes : large->segment_bytes) bytes = get<std::uint64_t>(at);
  large->header.resize(header_bytes);
  return large;
}

// Large messages from one node advance together, within limits: headers are received in the
// order they were announced, each header is read (and its segments' receives posted) only after
// the one before, and what arrived is handed up in arrival order, small frames included.
bool transport::advance_large(node_id from, source_state& source) {
  bool busy = false;
  std::size_t in_flight = 0;
  std::uint64_t bytes_in_flight = 0;
  bool earlier_unread = false;
  std::size_t seen = 0;
  for (auto& item : source.queue) {
    if (seen == source.large_waiting) break;  // only small frames behind
    if (!item.large) continue;
    ++seen;
    auto& large = *item.large;
    if (!large.posted) {
      if (in_flight >= max_large_in_flight) break;
      post_pieces(false, large.header.data(), large.header.size(), static_cast<int>(from),
                  header_tag, comm_, large.requests);
      large.posted = true;
      busy = true;
    }
    ++in_flight;
    if (!large.decoded && !earlier_unread && (bytes_in_flight < max_large_bytes) &&
        all_done(large.requests)) {
      large.requests.clear();
      large.message = handler_.on_large_header(from, std::move(large.header), large.segment_bytes);
      for (auto destination : large.message->destinations())
        post_pieces(false, destination.data(), destination.size(), static_cast<int>(from),
                    segment_tag, comm_, large.requests);
      large.decoded = true;
      busy = true;
    }
    if (!large.decoded) earlier_unread = true;
    for (auto bytes : large.segment_bytes) bytes_in_flight += bytes;
  }
  while (!source.queue.empty()) {
    auto& front = source.queue.front();
    if (front.large) {
      if (!front.large->decoded || !all_done(front.large->requests)) break;
      front.large->message->complete();
      --source.large_waiting;
      ++frames_handled_;
    } else {
      handle(from, front.kind, front.payload);
    }
    source.queue.pop_front();
    busy = true;
  }
  return busy;
}

bool transport::poll_large() {
  bool busy = false;
  for (node_id from = 0; from < sources_.size(); ++from)
    if (!sources_[from].queue.empty()) busy |= advance_large(from, sources_[from]);
  return busy;
}

bool transport::large_receives_waiting() const noexcept {
  for (const auto& source : sources_)
    if (source.large_waiting != 0) return true;
  return false;
}

bool transport::outgoing_empty() {
  for (auto& box : outboxes_) {
    std::lock_guard guard{box->mutex};
    if (!box->current.empty() || !box->full.empty() || !box->large.empty()) return false;
  }
  for (auto& source : sources_)
    if (!source.queue.empty()) return false;
  return sends_.empty();
}

void transport::start_round(std::uint64_t busy) {
  round_values_[0] = busy;
  round_values_[1] = frames_sent_.load(std::memory_order_acquire);
  round_values_[2] = frames_handled_;
  MPI_Iallreduce(round_values_, round_result_, 3, MPI_UINT64_T, MPI_SUM, comm_, &round_request_);
  round_active_ = true;
}

// The end of the job is found in rounds, each a sum over all nodes of (busy nodes, frames sent,
// frames handled). Once a round finds no node busy and as many frames handled as sent, and the
// round before found the same, nothing moved between them, and nothing can move any more. All
// nodes see the same sums, so all decide in the same round. After the job is done, rounds go on
// (without asking whether actors are busy) until what the ending actors sent has arrived.
bool transport::poll_termination() {
  const bool stopping = stopping_.load(std::memory_order_acquire);
  if (!draining_.load(std::memory_order_acquire) || (job_done_ && !stopping)) return false;
  if (round_active_) {
    int done = 0;
    MPI_Test(&round_request_, &done, MPI_STATUS_IGNORE);
    if (!done) return false;
    round_active_ = false;
    const bool quiet = round_result_[0] == 0 && round_result_[1] == round_result_[2];
    const bool settled = quiet && previous_quiet_ && round_result_[1] == previous_sent_ &&
                         round_result_[2] == previous_handled_;
    previous_quiet_ = quiet;
    previous_sent_ = round_result_[1];
    previous_handled_ = round_result_[2];
    if (settled) {
      previous_quiet_ = false;
      previous_sent_ = ~std::uint64_t{0};
      if (!job_done_) {
        job_done_ = true;
        handler_.on_job_done();
      } else {
        final_done_ = true;
      }
      return true;
    }
    if (!quiet) next_round_ = std::chrono::steady_clock::now() + round_pause;
    return true;
  }
  if (std::chrono::steady_clock::now() < next_round_) return false;
  const bool idle = outgoing_empty() && (job_done_ || handler_.locally_quiet());
  start_round(idle ? 0 : 1);
  return false;
}

void transport::stop() {
  for (auto& box : outboxes_) {
    std::lock_guard guard{box->mutex};
    box->closed = true;
  }
  if (thread_.joinable()) {
    stopping_.store(true, std::memory_order_release);
    draining_.store(true, std::memory_order_release);
    wake();
    thread_.join();
  }
  for (auto& slot : receives_) {
    if (slot.request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&slot.request);
    MPI_Wait(&slot.request, MPI_STATUS_IGNORE);
  }
  for (auto& sent : sends_)
    MPI_Waitall(static_cast<int>(sent.requests.size()), sent.requests.data(), MPI_STATUSES_IGNORE);
  sends_.clear();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void transport::abort_job(const std::string& why) const noexcept {
  std::fprintf(stderr, "troupe: node %d: %s; ending the job\n", self_, why.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_, 1);
  std::abort();
}

}  // namespace troupe::net::detail
