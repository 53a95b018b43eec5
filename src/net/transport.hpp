#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "net/wire.hpp"
#include "troupe/async/executor.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe::net::detail {

/// A large message on its way in: where its segments go, and what to do once they are there.
class incoming_large {
 public:
  virtual ~incoming_large() = default;
  /// The places the segments are received into, in order.
  virtual std::vector<std::span<std::byte>> destinations() = 0;
  /// All segments have arrived.
  virtual void complete() = 0;
};

/// What the transport hands up to the network (called on the progress thread only).
class frame_handler {
 public:
  virtual ~frame_handler() = default;
  /// A small frame from `from`.
  virtual void on_frame(node_id from, frame_kind kind, std::span<const std::byte> payload) = 0;
  /// The header of a large message from `from`; `segment_bytes` are the sizes it announced.
  virtual std::unique_ptr<incoming_large> on_large_header(
      node_id from, std::vector<std::byte> header,
      const std::vector<std::uint64_t>& segment_bytes) = 0;
  /// True if no actor of this node runs or can be woken by anything but a message.
  virtual bool locally_quiet() = 0;
  /// Every node is shutting down and none can wake another: the job is over.
  virtual void on_job_done() = 0;
};

/// The node's MPI traffic, all of it on one progress thread, so that no worker of the scheduler
/// ever calls into MPI or waits for it. Small frames to one node are aggregated into buffers;
/// a buffer goes out when it is full, or as soon as its writers pause.
class transport {
 public:
  // -- constructors ---------------------------------------------------------

  /// Takes `comm` (freed by stop); frames go up to `handler`. With `spin`, the idle progress
  /// thread polls for a while before it yields its core (for when it has a core of its own), and
  /// tells `workers`, which run what arrives, while traffic flows, so that one of them stands by.
  transport(MPI_Comm comm, frame_handler& handler, std::size_t buffer_bytes, bool spin,
            executor& workers);
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;
  ~transport();

  // -- properties -----------------------------------------------------------

  /// The largest payload a small frame may have.
  std::size_t max_frame_payload() const noexcept { return buffer_bytes_ - frame_header_bytes; }

  // -- operations -----------------------------------------------------------

  void start();

  /// Appends a frame of `payload_bytes` to `to`'s buffer; `write` fills the payload. Any thread.
  /// False once stop() has begun: nothing is sent then.
  bool send_frame(node_id to, frame_kind kind, std::size_t payload_bytes,
                  const std::function<void(std::byte*)>& write);

  /// Sends a large message: `header`, then `segments` from where they lie; `keep_alive` holds
  /// them until sent. Any thread. False once stop() has begun.
  bool send_large(node_id to, std::vector<std::byte> header,
                  std::vector<std::span<const std::byte>> segments, message keep_alive);

  /// The system is shutting down: from now on the nodes look together for the end of the job.
  void begin_draining() noexcept;

  /// After the job is done: takes no more frames, delivers those in flight, then ends the
  /// progress thread and frees the communicator. Called on one thread, once.
  void stop();

  /// Ends the whole job with `why` on stderr: for what cannot happen between nodes of one
  /// program (a damaged frame), where going on would lose messages or hang.
  [[noreturn]] void abort_job(const std::string& why) const noexcept;

 private:
  struct outbox {
    std::mutex mutex;
    std::vector<std::byte> current;
    std::deque<std::vector<std::byte>> full;
    struct large_send {
      std::vector<std::byte> header;
      std::vector<std::span<const std::byte>> segments;
      message keep_alive;
    };
    std::deque<large_send> large;
    bool closed = false;  // stop() has begun
    // Bytes of frames appended so far (written under the mutex, read without it), so that the
    // progress thread locks a box only to take what it will send.
    std::atomic<std::uint64_t> appended{0};
    std::uint64_t seen = 0;     // `appended` at the previous look (progress thread)
    std::uint64_t shipped = 0;  // `appended` when the box was last emptied (progress thread)
  };
  struct send_in_flight {
    std::vector<MPI_Request> requests;
    std::vector<std::byte> buffer;
    message keep_alive;
    std::vector<std::byte> header;
  };
  struct receive_slot {
    std::vector<std::byte> buffer;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  // A large message on its way in: its header's receive, then its segments'.
  struct large_receive {
    std::vector<std::byte> header;
    std::vector<std::uint64_t> segment_bytes;
    std::vector<MPI_Request> requests;
    bool posted = false;   // the header's receive
    bool decoded = false;  // the header read, the segments' receives posted
    std::unique_ptr<incoming_large> message;
  };
  // What arrived from one node and waits for a large message before it, in arrival order.
  struct waiting {
    frame_kind kind;
    std::vector<std::byte> payload;        // a small frame
    std::unique_ptr<large_receive> large;  // or a large message
  };
  struct source_state {
    std::deque<waiting> queue;
    std::size_t large_waiting = 0;  // the large messages in queue
  };

  void run();
  bool poll_receives();
  bool poll_large();
  bool ship(bool everything);
  bool complete_sends();
  bool poll_termination();
  void start_round(std::uint64_t busy);
  void handle(node_id from, frame_kind kind, std::span<const std::byte> payload);
  std::unique_ptr<large_receive> announce_large(node_id from,
                                                std::span<const std::byte> announcement);
  bool advance_large(node_id from, source_state& source);
  void post_receive(receive_slot& slot);
  void append(outbox& box, frame_kind kind, std::size_t payload_bytes);
  void wake() noexcept;
  bool outgoing_empty();
  bool large_receives_waiting() const noexcept;
  std::vector<std::byte> fresh_buffer();

  MPI_Comm comm_;
  frame_handler& handler_;
  const std::size_t buffer_bytes_;
  const bool spin_;
  executor& workers_;
  int self_ = 0;
  int size_ = 1;
  std::vector<std::unique_ptr<outbox>> outboxes_;
  std::vector<receive_slot> receives_;  // posted in this order, matched in this order
  std::size_t next_receive_ = 0;
  std::vector<source_state> sources_;
  std::deque<send_in_flight> sends_;
  std::vector<std::vector<std::byte>> spare_;  // progress thread only

  // Frames counted for the end of the job: appended here, handled there.
  std::atomic<std::uint64_t> frames_sent_{0};
  std::uint64_t frames_handled_ = 0;

  // The search for the end of the job (progress thread).
  std::atomic<bool> draining_{false};
  bool round_active_ = false;
  MPI_Request round_request_ = MPI_REQUEST_NULL;
  std::uint64_t round_values_[3] = {};
  std::uint64_t round_result_[3] = {};
  std::uint64_t previous_sent_ = ~std::uint64_t{0};
  std::uint64_t previous_handled_ = 0;
  bool previous_quiet_ = false;
  bool job_done_ = false;
  bool final_done_ = false;
  std::chrono::steady_clock::time_point next_round_{};

  std::atomic<bool> stopping_{false};
  std::atomic<bool> pending_output_{false};
  std::atomic<bool> sleeping_{false};
  std::mutex sleep_mutex_;
  std::condition_variable sleep_cv_;
  std::thread thread_;
};

}  // namespace troupe::net::detail
