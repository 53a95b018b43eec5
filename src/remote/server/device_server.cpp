#include "troupe/remote/device_server.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "remote/protocol/serving_process.hpp"
#include "remote/server/device_server_state.hpp"
#include "remote/server/memory_return.hpp"

namespace troupe::remote::server {

namespace {

// PoCL 3.1 sets up its devices at the first clGetDeviceIDs, and other threads calling in
// meanwhile see no device (CL_DEVICE_NOT_FOUND) or devices without sizes (every buffer refused
// as over a maximum allocation of 0). That setup also calls setenv (HWLOC_PLUGINS_PATH), which
// races with any thread of the process that reads the environment meanwhile. So the server
// lists every device when it is made, on the thread that makes it, before it starts threads of
// its own; a connection never meets a half-made platform.
void initialize_platforms() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Before the loader starts: troupe's driver, if registered here, must list nothing.
    ::setenv(serving_process_variable, std::to_string(::getpid()).c_str(), 1);
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return;
    std::vector<cl_platform_id> platforms(count);
    if (clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS) return;
    for (auto platform : platforms) {
      char suffix[64] = {};
      clGetPlatformInfo(platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof suffix - 1, suffix, nullptr);
      if (std::string(suffix) == "troupe") continue;  // remote: nothing to set up here
      cl_uint devices = 0;
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices);
    }
  });
}

}  // namespace

// -- device_server: the interface ---------------------------------------------

device_server::device_server(server_options options)
    : state_(std::make_unique<state>(std::move(options))) {}

device_server::~device_server() = default;

std::uint16_t device_server::port() const {
  return state_->port();
}

std::size_t device_server::session_count() const {
  return state_->session_count();
}

std::size_t device_server::object_count() const {
  return state_->object_count();
}

std::size_t device_server::connection_count() const {
  return state_->connection_count();
}

void device_server::start() {
  state_->start();
}

void device_server::run() {
  state_->run();
}

void device_server::stop() {
  state_->stop();
}

// -- device_server::state: accepting ------------------------------------------

namespace {

// The server's TLS context, if its options ask for one: both files or neither.
std::shared_ptr<const tls_context> make_tls(const server_options& options) {
  if (options.tls_certificate.empty() != options.tls_key.empty()) {
    throw std::invalid_argument(options.tls_certificate.empty()
                                    ? "--tls-key " + options.tls_key +
                                          " was given without --tls-cert: give both or neither"
                                    : "--tls-cert " + options.tls_certificate +
                                          " was given without --tls-key: give both or neither");
  }
  if (options.tls_certificate.empty()) return nullptr;
  return tls_context::server(options.tls_certificate, options.tls_key);
}

}  // namespace

device_server::state::state(server_options options)
    : options_(std::move(options)),
      tls_(make_tls(options_)),
      listener_(options_.address, options_.port) {
  if (!listener_.loopback() && options_.token.empty()) {
    throw std::invalid_argument("listening on " + options_.address +
                                ", which is not a loopback address, needs a token file");
  }
  if (!listener_.loopback() && tls_ == nullptr && !options_.insecure) {
    throw std::invalid_argument(
        "listening on " + options_.address +
        ", which is not a loopback address, needs TLS (--tls-cert FILE --tls-key FILE), or "
        "--insecure to send the token, session keys and data in clear text");
  }
  if (options_.max_clients == 0) throw std::invalid_argument("max clients must be at least 1");
  if (options_.max_handshakes == 0 || options_.max_session_connections == 0) {
    throw std::invalid_argument("max handshakes and max session connections must be at least 1");
  }
  if (options_.handshake_timeout.count() <= 0 || options_.idle_timeout.count() <= 0) {
    throw std::invalid_argument("the handshake and idle timeouts must be positive");
  }
  // With TLS every connection is TLS: no plain local socket beside it.
  if (options_.local_socket && listener_.loopback() && tls_ == nullptr) open_local_listener();
  initialize_platforms();
}

// A random name, bound before any client learns it from its welcome, so that no other program
// can take it first and pose as the server. Local users can list it (/proc/net/unix), as they
// can connect to the TCP port: it grants nothing the port does not, the token included.
void device_server::state::open_local_listener() {
  std::random_device random;
  char name[48];
  std::snprintf(name, sizeof name, "troupe-deviced-%08x%08x%08x%08x", random(), random(), random(),
                random());
  try {
    local_listener_.emplace(listen_socket::local_name{name});
    local_name_ = name;
  } catch (const std::exception& error) {
    log(log_level::warn, std::string(error.what()) + "; clients on this host use TCP");
  }
}

device_server::state::~state() {
  stop();
  if (acceptor_.joinable()) acceptor_.join();
  if (local_acceptor_.joinable()) local_acceptor_.join();
  if (watchdog_.joinable()) watchdog_.join();
  std::vector<worker> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& finishing : workers) finishing.thread.join();
}

void device_server::state::start() {
  watchdog_ = std::thread([this] { watch(); });
  start_local_acceptor();
  acceptor_ = std::thread([this] { run(); });
}

void device_server::state::run() {
  if (!watchdog_.joinable()) watchdog_ = std::thread([this] { watch(); });
  start_local_acceptor();
  log(log_level::info, "serving on " + options_.address + ":" + std::to_string(port()) +
                           (tls_ != nullptr ? " over TLS" : " over plain TCP") +
                           (local_name_.empty() ? "" : " and a local socket"));
  accept_from(listener_);
}

// Before any connection is accepted, so that no welcome has named the socket yet if its thread
// cannot be made.
void device_server::state::start_local_acceptor() {
  if (!local_listener_ || local_acceptor_.joinable()) return;
  try {
    local_acceptor_ = std::thread([this] { accept_from(*local_listener_); });
  } catch (const std::system_error& error) {
    log(log_level::warn, std::string("cannot start the local socket's thread (") + error.what() +
                             "); clients on this host use TCP");
    local_listener_->close();
    local_name_.clear();
  }
}

void device_server::state::accept_from(listen_socket& listener) {
  // After a failed accept (out of descriptors, of memory) the connection waits in the backlog:
  // pause, longer each time up to a second, and try again. Never give up: that would end the
  // daemon, and give whoever exhausted its descriptors what they wanted.
  constexpr auto first_pause = std::chrono::milliseconds(1);
  constexpr auto longest_pause = std::chrono::milliseconds(1000);
  std::chrono::milliseconds pause = first_pause;
  while (!stopping_) {
    stream_socket socket;
    try {
      socket = listener.accept();
    } catch (const std::system_error& error) {
      log(accept_failures_, log_level::warn,
          std::string("cannot accept a connection (") + error.what() + "); trying again in " +
              std::to_string(pause.count()) + " ms");
      std::unique_lock lock(mutex_);
      // Out of descriptors: the connection that has waited longest for its handshake gives
      // its own up, so that the backlog moves whatever --max-handshakes allows.
      if (!handshaking_.empty()) {
        handshaking_.front()->shutdown();
        handshaking_.pop_front();
      }
      stopped_.wait_for(lock, pause, [&] { return stopping_.load(); });
      pause = std::min(pause * 2, longest_pause);
      continue;
    }
    if (!socket.valid()) break;
    pause = first_pause;
    admit(std::move(socket));
  }
}

// A connection accepted: its handshake starts now, on a thread of its own. Connections still in
// their handshake are capped; the one that has waited longest makes room for the newcomer, so
// that a flood of silent connections cannot keep a real client out.
void device_server::state::admit(stream_socket accepted) {
  auto socket = std::make_unique<stream_socket>(std::move(accepted));
  socket->set_deadline(std::chrono::steady_clock::now() + options_.handshake_timeout);
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  std::erase_if(workers_, [](worker& old) {
    if (!*old.done) return false;
    old.thread.join();
    return true;
  });
  if (handshaking_.size() >= options_.max_handshakes) {
    handshaking_.front()->shutdown();  // its thread ends and closes it
    handshaking_.pop_front();
    log(handshakes_closed_, log_level::warn,
        "closed the oldest of " + std::to_string(options_.max_handshakes) +
            " connections still in their handshake, to make room for a new one "
            "(--max-handshakes)");
  }
  stream_socket* raw = socket.get();
  open_sockets_.push_back(raw);
  handshaking_.push_back(raw);
  try {
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([this, done, owned = std::move(socket)] {
                          serve(*owned);
                          note_memory_freed();  // its frame buffer, up to 64 MiB
                          std::lock_guard finished(mutex_);
                          std::erase(open_sockets_, owned.get());
                          std::erase(handshaking_, owned.get());
                          *done = true;
                        }),
                        done});
  } catch (const std::system_error& error) {
    // No thread for it: the connection is closed (with the function that owned it), and the
    // server goes on.
    std::erase(open_sockets_, raw);
    std::erase(handshaking_, raw);
    log(refusals_, log_level::error,
        std::string("closed a connection that got no thread to serve it: ") + error.what());
  }
}

void device_server::state::stop() {
  if (stopping_.exchange(true)) return;
  listener_.close();
  if (local_listener_) local_listener_->close();
  std::lock_guard lock(mutex_);
  for (auto* socket : open_sockets_) socket->shutdown();
  stopped_.notify_all();
}

// Closes sessions idle for options_.idle_timeout: no frame on any of their connections, no
// request being served, no reply waiting for its command.
void device_server::state::watch() {
  const auto tick = std::clamp<std::chrono::milliseconds>(
      options_.idle_timeout / 8, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    stopped_.wait_for(lock, tick, [&] { return stopping_.load(); });
    lock.unlock();
    return_freed_memory();
    lock.lock();
    const auto now = std::chrono::steady_clock::now();
    for (auto& [id, entry] : sessions_) {
      std::uint64_t frames = entry.connections.size();
      bool busy = false;
      for (auto& connection : entry.connections) {
        const auto done = connection.done->frames.load(std::memory_order_relaxed);
        frames += done;
        busy |= done % 2 == 1 ||
                (connection.done->replies != nullptr && connection.done->replies->pending());
      }
      if (busy || frames != entry.seen) {
        entry.seen = frames;
        entry.active_at = now;
      } else if (now - entry.active_at >= options_.idle_timeout && !entry.closing) {
        entry.closing = true;
        log(log_level::info, "session " + std::to_string(id) + " idle for " +
                                 std::to_string(options_.idle_timeout.count()) +
                                 " ms; closing it (--idle-timeout-s)");
        entry.anchor->shutdown();  // its thread closes the session
      }
    }
  }
}

std::size_t device_server::state::session_count() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::size_t device_server::state::object_count() const {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (auto& [id, entry] : sessions_) count += entry.opened->object_count();
  return count;
}

std::size_t device_server::state::connection_count() const {
  std::lock_guard lock(mutex_);
  return open_sockets_.size();
}

void device_server::state::log(log_level level, const std::string& message) const {
  if (level > options_.level) return;
  static constexpr const char* names[] = {"error", "warn", "info", "debug"};
  std::fprintf(stderr, "troupe-deviced: %s: %s\n", names[static_cast<int>(level)], message.c_str());
}

void device_server::state::log(log_throttle& throttle, log_level level,
                               const std::string& message) const {
  if (level > options_.level) return;
  auto held_back = throttle.admit();
  if (!held_back) return;
  log(level, *held_back == 0 ? message
                             : message + " (and " + std::to_string(*held_back) +
                                   " more like it in the last second)");
}

}  // namespace troupe::remote::server
