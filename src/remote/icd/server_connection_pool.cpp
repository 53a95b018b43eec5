// server_connection: the request connection a call goes on. Each thread has its own, attached
// on its first call and kept for the next thread when it ends; a thread the server refuses one
// shares another's; striped transfers take theirs from a bulk pool.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "remote/icd/server_connection.hpp"

namespace troupe::remote::icd {

// Each thread's connections, its own returned to their servers' idle lists when the thread
// ends (a shared one stays with its owner).
struct thread_connections {
  struct entry {
    server_connection* server;
    connection* link;
    bool owned;
  };
  std::vector<entry> held;
  ~thread_connections() {
    for (auto [server, link, owned] : held) {
      if (!owned) continue;
      server->release_held(link->index);
      std::lock_guard lock(server->mutex_);
      server->idle_.push_back(link);
    }
  }
};
thread_local thread_connections this_thread;

connection* server_connection::this_thread_connection_if_any() {
  for (auto [server, link, owned] : this_thread.held) {
    if (server == this) return link;
  }
  return nullptr;
}

connection& server_connection::this_thread_connection() {
  auto mine = std::find_if(this_thread.held.begin(), this_thread.held.end(),
                           [this](const auto& entry) { return entry.server == this; });
  if (mine != this_thread.held.end() && mine->owned) return *mine->link;
  // A thread that shares takes a connection of its own once one is idle; it does not ask the
  // server again, which would cost a refused connection per call.
  connection* link = take_idle();
  if (link == nullptr && mine != this_thread.held.end()) return *mine->link;
  bool owned = true;
  if (link == nullptr) {
    try {
      auto made = attach();
      link = made.get();
      std::lock_guard lock(mutex_);
      connections_.push_back(std::move(made));
    } catch (const connection_refused& refusal) {
      // Refused, not lost: the session and its other connections stand.
      link = share(refusal.what());
      if (link == nullptr) {
        throw connection_refused("the server " + endpoint_ +
                                 " refused this thread a request connection (" + refusal.what() +
                                 ") and the session has none to share");
      }
      owned = false;
    } catch (const std::exception& error) {
      // Closed without an answer (a server out of descriptors does that): with connections
      // of the session open, the server is there; without any, it is lost as before.
      link = share(error.what());
      if (link == nullptr) throw;
      owned = false;
    }
  }
  if (mine != this_thread.held.end()) {
    *mine = {this, link, owned};
  } else {
    this_thread.held.push_back({this, link, owned});
  }
  return *link;
}

connection* server_connection::take_idle() {
  std::lock_guard lock(mutex_);
  if (idle_.empty()) return nullptr;
  connection* link = idle_.back();
  idle_.pop_back();
  return link;
}

connection* server_connection::share(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (connections_.empty()) return nullptr;
  if (!warned_sharing_) {
    warned_sharing_ = true;
    warn("the server " + endpoint_ + " refused a thread a request connection of its own (" + why +
         "); such threads share the session's connections, one call at a time");
  }
  return connections_[next_shared_++ % connections_.size()].get();
}

// Bulk connections are a pool of their own, apart from the threads' connections: a stripe holds
// one for a single transfer, so a thread that blocks in clFinish never holds one up.
connection* server_connection::take_bulk() {
  constexpr std::size_t most_bulk = 32;
  {
    std::lock_guard lock(mutex_);
    if (!idle_bulk_.empty()) {
      connection* link = idle_bulk_.back();
      idle_bulk_.pop_back();
      return link;
    }
    if (lost_ || bulk_refused_ || bulk_made_ >= most_bulk) return nullptr;
    ++bulk_made_;
  }
  try {
    auto made = attach();
    connection* link = made.get();
    std::lock_guard lock(mutex_);
    bulk_connections_.push_back(std::move(made));  // never shared with threads (share())
    return link;
  } catch (const std::exception& error) {
    // The transfer goes on over fewer connections; one that cannot be made is not tried again.
    debug("no bulk connection to " + endpoint_ + ": " + error.what());
    std::lock_guard lock(mutex_);
    --bulk_made_;
    bulk_refused_ = true;
    return nullptr;
  }
}

void server_connection::give_back_bulk(connection* link) {
  // Failures of its pipelined frames reach the transfer through events (striped_transfer.cpp):
  // reported with its next reply, they would belong to no call of the next transfer's.
  link->deferred.store(CL_SUCCESS);
  std::lock_guard lock(mutex_);
  idle_bulk_.push_back(link);
}

void server_connection::release_held(std::uint32_t index) {
  connection* link = nullptr;
  {
    std::lock_guard lock(mutex_);
    for (auto& made : connections_) {
      if (made->index == index) link = made.get();
    }
  }
  if (link == nullptr || !link->holding.load(std::memory_order_acquire)) return;
  std::lock_guard lock(link->mutex);
  if (link->held.empty()) return;
  try {
    link->socket.send_encoded(link->held);
  } catch (const std::exception& error) {
    mark_lost(error.what());
  }
  link->held.clear();
  link->holding.store(false, std::memory_order_release);
}

}  // namespace troupe::remote::icd
