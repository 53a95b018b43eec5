#pragma once

// A TCP forwarder between a client and a server that records every byte it passes, as someone
// on the path would see them.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "remote/protocol/socket.hpp"

namespace troupe::remote_test {

/// Listens on 127.0.0.1 and a free port; each connection is forwarded to 127.0.0.1:`target`.
class recording_forwarder {
 public:
  explicit recording_forwarder(std::uint16_t target)
      : target_(target), listener_("127.0.0.1", 0), acceptor_([this] { accept_all(); }) {}
  recording_forwarder(const recording_forwarder&) = delete;
  recording_forwarder& operator=(const recording_forwarder&) = delete;
  ~recording_forwarder() {
    listener_.close();
    acceptor_.join();
    {
      std::lock_guard lock(mutex_);
      for (auto& joined : pairs_) {
        joined->client.shutdown();
        joined->server.shutdown();
      }
    }
    for (auto& pumping : pumps_) pumping.join();
  }

  /// Where clients connect.
  [[nodiscard]] std::uint16_t port() const { return listener_.port(); }

  /// Every byte passed so far, both directions, in the order they came.
  [[nodiscard]] std::string recorded() const {
    std::lock_guard lock(mutex_);
    return recorded_;
  }

 private:
  struct pair {
    remote::stream_socket client;
    remote::stream_socket server;
  };

  void accept_all() {
    while (true) {
      remote::stream_socket client = listener_.accept();
      if (!client.valid()) return;
      auto joined = std::make_unique<pair>();
      joined->client = std::move(client);
      try {
        joined->server = remote::stream_socket::connect("127.0.0.1", target_, 5000);
      } catch (const std::exception&) {
        continue;  // the client sees its connection closed
      }
      std::lock_guard lock(mutex_);
      pair* raw = joined.get();
      pairs_.push_back(std::move(joined));
      pumps_.emplace_back([this, raw] { pump(*raw); });
    }
  }

  // Moves bytes both ways until either side ends; then ends both.
  void pump(pair& joined) {
    pollfd ends[2] = {{joined.client.fd(), POLLIN, 0}, {joined.server.fd(), POLLIN, 0}};
    std::vector<char> buffer(1 << 16);
    bool open = true;
    while (open && ::poll(ends, 2, -1) > 0) {
      for (int side = 0; side < 2 && open; ++side) {
        if (ends[side].revents == 0) continue;
        ssize_t got = ::recv(ends[side].fd, buffer.data(), buffer.size(), 0);
        if (got <= 0) {
          open = false;
          break;
        }
        {
          std::lock_guard lock(mutex_);
          recorded_.append(buffer.data(), static_cast<std::size_t>(got));
        }
        for (ssize_t sent = 0; sent < got && open;) {
          ssize_t now = ::send(ends[1 - side].fd, buffer.data() + sent,
                               static_cast<std::size_t>(got - sent), MSG_NOSIGNAL);
          open = now > 0;
          sent += std::max<ssize_t>(now, 0);
        }
      }
    }
    joined.client.shutdown();
    joined.server.shutdown();
  }

  std::uint16_t target_;
  remote::listen_socket listener_;
  mutable std::mutex mutex_;  // guards everything below
  std::string recorded_;
  std::vector<std::unique_ptr<pair>> pairs_;
  std::vector<std::thread> pumps_;
  std::thread acceptor_;  // last: it starts once everything above exists
};

}  // namespace troupe::remote_test
