#include "remote/icd/striped_transfer.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "remote/icd/api_support.hpp"

namespace troupe::remote::icd {

namespace {

// A transfer below this stays on one connection; each stripe carries at least `least_stripe`.
constexpr std::size_t least_striped = std::size_t{16} << 20;
constexpr std::size_t least_stripe = std::size_t{4} << 20;
// Pieces of one stripe of a read on their way at once: the server sends one while the device
// reads the next, and holds no more than this many per stripe (its host memory quota).
constexpr std::size_t read_window = 2;

// TROUPE_ICD_STREAMS: connections per large transfer, 1 to 16 (1: no striping). By default 4
// over plain TCP and 8 over TLS, or fewer on a small host: each stream needs a core at each end
// for its copies, and over TLS for its encryption too, which costs more per byte than the
// copies (on an H100 host, 256 MiB over TLS moved 28 to 51% faster on 8 streams than on 4). On
// two cores striping measured no faster over loopback (docs/remote.md).
std::size_t configured_streams(bool encrypted) {
  static const std::size_t setting = [] {
    const char* text = std::getenv("TROUPE_ICD_STREAMS");
    if (text == nullptr || *text == '\0') return std::size_t{0};
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > 16) {
      warn(std::string("TROUPE_ICD_STREAMS is '") + text +
           "', expected connections per transfer from 1 (no striping) to 16; using the default");
      return std::size_t{0};
    }
    return static_cast<std::size_t>(value);
  }();
  if (setting != 0) return setting;
  const std::size_t cores = std::thread::hardware_concurrency();
  return encrypted ? std::clamp<std::size_t>(cores / 2, 1, 8)
                   : std::clamp<std::size_t>(cores / 4, 1, 4);
}

// One stripe: a contiguous range of the transfer, sent on one connection by one thread.
struct stripe {
  connection* link = nullptr;
  bool bulk = false;  // a connection of the bulk pool (else the caller's own)
  std::size_t begin = 0;
  std::size_t end = 0;
  cl_int status = CL_SUCCESS;
  std::atomic<cl_int> failure{CL_SUCCESS};  // a read piece's, from its reply
  std::vector<cl_event> events;             // a write's pieces
  std::uint32_t last_sequence = 0;          // its connection's last frame, for the final fence
};

// What the stripes of one transfer share.
struct transfer {
  cl_command_queue queue = nullptr;
  cl_mem buffer = nullptr;
  std::size_t offset = 0;
  std::byte* host = nullptr;
  cl_uint num_events = 0;
  const cl_event* wait_list = nullptr;
  // The caller's last frame before the transfer: every bulk stripe is fenced behind it.
  std::uint32_t caller_index = 0;
  std::uint32_t caller_sequence = 0;
  std::vector<std::unique_ptr<stripe>> stripes;

  ~transfer() {
    for (auto& part : stripes) {
      if (part->bulk) queue->server->give_back_bulk(part->link);
    }
  }
};

// Cuts [0, size) into up to `count` stripes: the caller's connection carries the first, bulk
// connections the others (fewer when the pool gives no more).
cl_int plan(transfer& job, std::size_t size, std::size_t count) {
  server_connection& server = *job.queue->server;
  connection* caller = nullptr;
  try {
    caller = &server.this_thread_connection();
  } catch (const std::exception& error) {
    server.mark_lost(error.what());
    return CL_OUT_OF_RESOURCES;
  }
  server.release_held(caller->index);
  {
    std::lock_guard lock(caller->mutex);
    job.caller_index = caller->index;
    job.caller_sequence = caller->sequence;
  }
  std::vector<connection*> links{caller};
  while (links.size() < count) {
    connection* bulk = server.take_bulk();
    if (bulk == nullptr) break;
    links.push_back(bulk);
  }
  const std::size_t share = (size + links.size() - 1) / links.size();
  for (std::size_t index = 0; index < links.size(); ++index) {
    auto part = std::make_unique<stripe>();
    part->link = links[index];
    part->bulk = index > 0;
    part->begin = std::min(size, index * share);
    part->end = std::min(size, part->begin + share);
    job.stripes.push_back(std::move(part));
  }
  return CL_SUCCESS;
}

// A request of a stripe, on its stripe's connection. A bulk stripe's first is fenced behind the
// caller's frames before the transfer. No piece is recorded by the objects it names: stripes
// running at once would otherwise fence each other's pieces, one behind the other.
void route(request& piece, const transfer& job, stripe& part, bool first) {
  piece.on(*part.link).unrecorded();
  if (part.bulk && first && job.caller_sequence != 0) {
    piece.after(job.caller_index, job.caller_sequence);
  }
}

// Runs `work` on every stripe at once: the first on the calling thread, each other on a thread
// of its own (on the calling thread too, after the others, if no thread can be started).
template <class Work>
void run_stripes(transfer& job, Work work) {
  std::vector<std::thread> helpers;
  std::vector<stripe*> inline_parts{job.stripes.front().get()};
  for (std::size_t index = 1; index < job.stripes.size(); ++index) {
    stripe* part = job.stripes[index].get();
    try {
      helpers.emplace_back([&job, &work, part] { work(job, *part); });
    } catch (const std::system_error&) {
      inline_parts.push_back(part);
    }
  }
  for (stripe* part : inline_parts) work(job, *part);
  for (auto& helper : helpers) helper.join();
}

void remember_last_frame(stripe& part) {
  std::lock_guard lock(part.link->mutex);
  part.last_sequence = part.link->sequence;
}

// Sends a stripe of a write, piece by piece, from the caller's memory; every piece has an
// event, which the transfer's last frame waits for.
void write_stripe(transfer& job, stripe& part) {
  for (std::size_t done = part.begin; done < part.end;) {
    const std::size_t piece = std::min<std::size_t>(part.end - done, transfer_piece);
    request writing(opcode::write_buffer);
    route(writing, job, part, done == part.begin);
    cl_event mine = nullptr;
    part.status = put_command(writing, job.queue, job.num_events, job.wait_list, &mine);
    if (part.status != CL_SUCCESS) break;
    writing.object(job.buffer);
    writing.fields.put<std::uint8_t>(0).put<std::uint64_t>(job.offset + done);
    writing.fields.put_tail(job.host + done, piece);
    part.status = send_command(writing, job.queue, &mine);
    if (part.status != CL_SUCCESS) break;
    part.events.push_back(mine);
    done += piece;
  }
  remember_last_frame(part);
}

// Sends a stripe of a blocking read, piece by piece, each answered once the device has read
// it, and receives the pieces straight into the caller's memory as they come.
void read_stripe(transfer& job, stripe& part) {
  server_connection& server = *job.queue->server;
  std::vector<std::uint64_t> issues;
  std::size_t settled = 0;
  auto settle_oldest = [&] {
    const std::uint64_t oldest = issues[settled++];
    cl_int status = server.settle_reads(
        [&](const pending_read& read) { return read.link == part.link && read.issue == oldest; });
    if (part.status == CL_SUCCESS) part.status = status;
  };
  for (std::size_t done = part.begin; done < part.end && part.status == CL_SUCCESS;) {
    while (issues.size() - settled >= read_window) settle_oldest();
    const std::size_t piece = std::min<std::size_t>(part.end - done, transfer_piece);
    request reading(opcode::read_buffer);
    route(reading, job, part, done == part.begin);
    part.status = put_command(reading, job.queue, job.num_events, job.wait_list, nullptr);
    if (part.status != CL_SUCCESS) break;
    reading.object(job.buffer);
    reading.fields.put<std::uint64_t>(job.offset + done).put<std::uint64_t>(piece);
    pending_read landing;
    landing.destination = job.host + done;
    landing.size = piece;
    landing.covers_begin = job.host + done;
    landing.covers_end = job.host + done + piece;
    landing.failure = &part.failure;
    part.status = send_read(reading, job.queue, nullptr, std::move(landing));
    if (part.status != CL_SUCCESS) break;
    issues.push_back(reading.issue);
    done += piece;
  }
  // Every piece sent lands (or is dropped with a lost server) before the call returns.
  while (settled < issues.size()) settle_oldest();
  if (part.status == CL_SUCCESS) part.status = part.failure.load();
}

cl_int first_failure(const transfer& job) {
  for (const auto& part : job.stripes) {
    if (part->status != CL_SUCCESS) return part->status;
  }
  return CL_SUCCESS;
}

}  // namespace

std::size_t stripe_count(cl_command_queue queue, cl_mem buffer, std::size_t size,
                         cl_uint num_events, const cl_event* wait_list) {
  if (!valid(queue, object_kind::queue)) return 1;
  const std::size_t streams = configured_streams(queue->server->encrypted());
  if (streams < 2 || size < least_striped) return 1;
  // An out-of-order queue keeps a transfer's pieces chained by events on one connection.
  if (!queue->in_order) return 1;
  if (!is_mem(buffer) || buffer->server != queue->server) return 1;
  if ((num_events == 0) != (wait_list == nullptr)) return 1;
  // The stripes' threads send no frame of their own: another server's events, waited for on
  // the host, stay with the plain path.
  for (cl_uint index = 0; index < num_events; ++index) {
    if (!valid(wait_list[index], object_kind::event) || wait_list[index]->server != queue->server)
      return 1;
  }
  return std::min(streams, size / least_stripe);
}

cl_int striped_write(cl_command_queue queue, cl_mem buffer, bool blocking, std::size_t offset,
                     std::size_t size, const void* host, cl_uint num_events,
                     const cl_event* wait_list, cl_event* event, std::size_t stripes) {
  if (buffer->size != 0 && (offset > buffer->size || size > buffer->size - offset)) {
    return CL_INVALID_VALUE;
  }
  transfer job;
  job.queue = queue;
  job.buffer = buffer;
  job.offset = offset;
  job.host = const_cast<std::byte*>(static_cast<const std::byte*>(host));
  job.num_events = num_events;
  job.wait_list = wait_list;
  if (cl_int status = plan(job, size, stripes); status != CL_SUCCESS) return status;
  run_stripes(job, write_stripe);
  cl_int status = first_failure(job);
  std::vector<cl_event> pieces;
  for (const auto& part : job.stripes)
    pieces.insert(pieces.end(), part->events.begin(), part->events.end());
  // The last frame, on the caller's connection: processed once every bulk stripe's pieces
  // are enqueued, so the caller's later commands come after them on the queue. It is a marker
  // waiting for every piece, whose event is the call's (a failed piece fails it).
  // On the connection stripe 0 went on: a thread that shares may be handed another meanwhile.
  connection& caller = *job.stripes.front()->link;
  request marking(opcode::marker);
  marking.on(caller);
  for (const auto& part : job.stripes) {
    if (part->bulk && part->last_sequence != 0)
      marking.after(part->link->index, part->last_sequence);
  }
  cl_event internal = nullptr;
  cl_event* target = status != CL_SUCCESS ? nullptr
                     : event != nullptr   ? event
                     : blocking           ? &internal
                                          : nullptr;
  const cl_uint waited = status == CL_SUCCESS ? static_cast<cl_uint>(pieces.size()) : 0;
  cl_int sent = put_command(marking, queue, waited, waited != 0 ? pieces.data() : nullptr, target);
  if (sent == CL_SUCCESS) sent = send_command(marking, queue, target);
  for (cl_event piece : pieces) clReleaseEvent(piece);
  if (status == CL_SUCCESS) status = sent;
  // As the plain path's blocking last piece: the write is over when the call returns.
  if (status == CL_SUCCESS && blocking) status = clWaitForEvents(1, target);
  if (internal != nullptr) clReleaseEvent(internal);
  // A blocking call reports earlier pipelined failures of the caller's connection, as the
  // plain path's does.
  if (blocking) status = request(opcode::marker).on(caller).with_deferred(*queue->server, status);
  if (status != CL_SUCCESS && target == event && event != nullptr && sent == CL_SUCCESS) {
    clReleaseEvent(*event);  // a failed call returns no event
    *event = nullptr;
  }
  return status;
}

cl_int striped_read(cl_command_queue queue, cl_mem buffer, std::size_t offset, std::size_t size,
                    void* host, cl_uint num_events, const cl_event* wait_list, cl_event* event,
                    std::size_t stripes) {
  if (buffer->size != 0 && (offset > buffer->size || size > buffer->size - offset)) {
    return CL_INVALID_VALUE;
  }
  server_connection& server = *queue->server;
  // Reads of the queue issued before this one land before it returns (an in-order queue).
  const std::uint64_t issued_before = server.next_issue();
  transfer job;
  job.queue = queue;
  job.buffer = buffer;
  job.offset = offset;
  job.host = static_cast<std::byte*>(host);
  job.num_events = num_events;
  job.wait_list = wait_list;
  // An earlier non-blocking read into these bytes lands first, as on the plain path.
  if (cl_int status = settle_overlap(server, host, size); status != CL_SUCCESS) return status;
  if (cl_int status = plan(job, size, stripes); status != CL_SUCCESS) return status;
  run_stripes(job, read_stripe);
  cl_int status = first_failure(job);
  if (status == CL_SUCCESS) {
    status = server.settle_reads([&](const pending_read& read) {
      return read.queue == queue && read.issue < issued_before;
    });
  }
  bool event_made = false;
  if (status == CL_SUCCESS && event != nullptr) {
    // Every piece has come back, so every stripe's frames were processed: the call's event is
    // a marker after them on the in-order queue. A blocking read's event is complete when the
    // call returns, and the device may take a moment over the marker: it is waited for.
    request marking(opcode::marker);
    marking.on(*job.stripes.front()->link);
    status = put_command(marking, queue, 0, nullptr, event);
    if (status == CL_SUCCESS) status = send_command(marking, queue, event);
    event_made = status == CL_SUCCESS;
    if (event_made) status = clWaitForEvents(1, event);
  }
  status =
      request(opcode::read_buffer).on(*job.stripes.front()->link).with_deferred(server, status);
  if (status != CL_SUCCESS && event_made) {
    clReleaseEvent(*event);  // a failed call returns no event
    *event = nullptr;
  }
  return status;
}

}  // namespace troupe::remote::icd
