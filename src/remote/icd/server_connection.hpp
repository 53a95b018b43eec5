// The client driver's connection to one server: the session, a socket per thread, and the
// replies that come on them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "remote/icd/objects.hpp"
#include "remote/protocol/socket.hpp"
#include "remote/protocol/tls_context.hpp"

namespace troupe::remote::icd {

/// A decoded reply.
struct reply {
  cl_int status = CL_SUCCESS;
  std::string message;
  std::vector<std::byte> payload;
  std::size_t fields_at = 0;
  [[nodiscard]] reader fields() const {
    return reader(std::span<const std::byte>(payload).subspan(fields_at));
  }
};

/// A request connection the server refused to open (an attach answered with an error): the
/// session stands, only this connection is not to be had.
class connection_refused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One connection of the session, sending for one thread at a time (rOpenCL's per-thread
/// connections: a thread blocked in clFinish does not hold up the others). A thread the server
/// refused a connection of its own shares one with its owner (server_connection::share).
struct connection {
  stream_socket socket;
  std::uint32_t index = 0;  ///< the server's number for it, within the session
  /// Held for a whole call, from its frame to its reply: a call's reply has one slot
  /// (`awaited`), so threads that share the connection call one at a time.
  std::mutex calling;
  /// Guards sending: `sequence`, `held` and the socket's sending side. Only the owning thread
  /// sends requests; another thread takes it only to send `held` (see request::prepare).
  std::mutex mutex;
  std::uint32_t sequence = 0;
  /// Encoded frames not sent yet: kernel arguments, which wait for the next frame that is sent
  /// (their launch, usually), so that a launch and its arguments cost one system call.
  std::vector<std::byte> held;
  std::atomic<bool> holding{false};
  /// The first failure of a pipelined frame or a read answered on completion, not yet reported.
  std::atomic<cl_int> deferred{CL_SUCCESS};

  // Receiving, guarded by the server's replies mutex. Replies to reads answered on completion
  // come whenever those complete, so any thread that needs one takes frames from the socket,
  // one thread at a time (`receiving`), and puts each where it belongs: a read's bytes in the
  // application's memory, the owner's reply in `awaited`.
  bool receiving = false;
  bool broken = false;  ///< receiving failed: nothing more comes
  struct awaited_reply {
    std::uint32_t sequence = 0;
    opcode op = opcode::ping;
    reply* answer = nullptr;
    void* bulk = nullptr;
    std::size_t size = 0;
    bool done = true;
  } awaited;  ///< the owner's call in flight (a thread makes one call at a time)
};

/// A read the server answers once it completes (flag_reply_on_completion) whose bytes have not
/// arrived yet. Whichever thread next takes its connection's replies puts them in place.
struct pending_read {
  connection* link = nullptr;
  std::uint32_t sequence = 0;
  opcode op = opcode::read_buffer;  ///< set by request::send_read
  void* destination = nullptr;      ///< where the reply's bytes go
  std::size_t size = 0;
  std::function<void()> unpack;  ///< after they arrived: scatters rows of rect and image reads
  cl_command_queue queue = nullptr;
  std::uint64_t issue = 0;  ///< its command's place in the order of issue (server_connection)
  /// Where a failure goes instead of the connection's deferred error (a striped read's piece).
  std::atomic<cl_int>* failure = nullptr;
  /// The application memory it writes: a later write from there must wait for it.
  const std::byte* covers_begin = nullptr;
  const std::byte* covers_end = nullptr;
};

/// The client driver's connection to a server named in the hostfile: the session it holds
/// there, a socket per thread, and the replies that come back (requests go out as `request`s).
/// Never destroyed: its objects and the threads' connections to it live as long as the program.
class server_connection {
 public:
  /// A server at host:port; `tls` null: plain TCP, otherwise every connection is TLS.
  server_connection(std::string host, std::uint16_t port, std::string token,
                    std::shared_ptr<const tls_context> tls);
  server_connection(const server_connection&) = delete;
  server_connection& operator=(const server_connection&) = delete;

  /// Connects and opens the session; throws connection_lost or std::runtime_error.
  void open(int timeout_ms);

  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
  [[nodiscard]] bool lost() const { return lost_; }
  /// True when every connection to the server is TLS.
  [[nodiscard]] bool encrypted() const { return tls_ != nullptr; }
  /// Marks the server gone (logged once); every later call fails at once.
  void mark_lost(const std::string& why);

  /// A fresh id for an object this client creates.
  std::uint64_t new_id() { return next_id_++; }

  /// The object for an id the server sent (info queries, platform and device lists), created
  /// on first sight as a borrowed object with no application reference.
  remote_object* object_for(object_kind kind, std::uint64_t id);
  void register_object(remote_object* object);
  void forget_object(std::uint64_t id);

  /// The calling thread's connection to this server: its own (made on first use), or one it
  /// shares when the server refuses it one. Throws connection_refused when none can be had.
  connection& this_thread_connection();
  /// The calling thread's connection to this server if it has one, else null.
  connection* this_thread_connection_if_any();
  /// A connection of the session for one stripe of a large transfer, kept for that transfer
  /// alone until give_back_bulk(); nullptr when no more may be opened (see striped_transfer).
  connection* take_bulk();
  /// Returns a connection that take_bulk() gave, for the next transfer.
  void give_back_bulk(connection* link);
  /// Sends the frames connection `index` holds back, if any (another thread's connection).
  void release_held(std::uint32_t index);

  /// Registers a callback to run when the server reports `id`; returns its id.
  std::uint64_t add_callback(std::function<void(cl_int)> callback);

  /// Numbers commands in the order they are issued (see settle_reads).
  std::uint64_t next_issue() { return next_issue_.fetch_add(1) + 1; }
  /// Waits until every pending read that `selected` picks has its bytes in place, taking
  /// replies from their connections as needed. CL_OUT_OF_RESOURCES once the server is lost.
  cl_int settle_reads(const std::function<bool(const pending_read&)>& selected);

 private:
  friend class request;
  /// Takes replies from `link` until `done()` (checked under `lock`, on replies_mutex_).
  void take_replies(connection& link, std::unique_lock<std::mutex>& lock,
                    const std::function<bool()>& done);
  /// Receives one frame on `link` (its receiving turn is the caller's) and puts it in place.
  void receive_one(connection& link);

  /// Opens one more request connection of the session; throws connection_refused when the
  /// server answers the attach with a refusal, connection_lost or decode_error otherwise.
  std::unique_ptr<connection> attach();
  /// A connection of the session for a thread refused one of its own (`why`), or null.
  connection* share(const std::string& why);
  /// An idle connection, taken off the idle list, or null.
  connection* take_idle();

  void listen_for_notifications();
  stream_socket connect_request_socket();
  void fail_pending_callbacks(cl_int status);
  /// A new connection to the server, TLS's handshake done if the hostfile asks for TLS.
  stream_socket connect(int timeout_ms);

  std::string host_;
  std::uint16_t port_;
  std::string token_;
  std::shared_ptr<const tls_context> tls_;
  std::string endpoint_;
  std::atomic<bool> lost_{false};
  std::uint64_t session_ = 0;
  std::uint64_t key_[2] = {0, 0};
  std::string local_name_;  // the server's local socket for request connections; mutex_
  stream_socket anchor_;
  std::atomic<std::uint64_t> next_id_{1};

  std::mutex mutex_;  // guards everything below
  std::vector<std::unique_ptr<connection>> connections_;
  std::vector<connection*> idle_;
  std::vector<std::unique_ptr<connection>> bulk_connections_;  // see take_bulk()
  std::vector<connection*> idle_bulk_;
  std::size_t bulk_made_ = 0;
  bool bulk_refused_ = false;  // the server refused one: it has no more to give
  std::unordered_map<std::uint64_t, remote_object*> objects_;
  std::unordered_map<std::uint64_t, std::function<void(cl_int)>> callbacks_;
  std::uint64_t next_callback_ = 1;
  std::size_t next_shared_ = 0;  ///< the connection the next sharing thread gets, round robin
  bool warned_sharing_ = false;

  std::mutex replies_mutex_;  // guards the receiving state of every connection and below
  std::condition_variable replies_changed_;
  /// By connection and sequence number: the reply's address.
  std::map<std::pair<const connection*, std::uint32_t>, pending_read> pending_reads_;
  std::atomic<std::uint64_t> next_issue_{0};

  friend struct thread_connections;
};

/// Logs a warning (TROUPE_ICD_LOG=quiet silences it, =debug adds detail).
void warn(const std::string& message);
void debug(const std::string& message);

}  // namespace troupe::remote::icd
