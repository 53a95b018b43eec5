#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "net/bulk_bytes.hpp"
#include "net/device_messages.hpp"
#include "troupe/async/future.hpp"
#include "troupe/async/shared_state.hpp"
#include "troupe/core/abstract_actor.hpp"
#include "troupe/core/actor.hpp"

namespace troupe::net::detail {

/// Sends a remote device's commands to its server and takes their answers: one actor for all of
/// them. A request made outside any actor (troupe::request) makes an actor of its own, which
/// the network then exports here and the server's node imports as a proxy, once per command;
/// this one is exported once.
class command_channel final : public abstract_actor {
 public:
  /// Makes one; the handle keeps it.
  static actor make(actor_system& system);

  /// Sends `c` with `data` to `server`; the future gets the answer, or the error the server,
  /// or the network, answered with.
  future<bulk_bytes> request(const actor& server, device_command c, bulk_bytes data);

  void enqueue(mailbox_element_ptr element) override;

 protected:
  void on_unreachable() override;

 private:
  explicit command_channel(actor_system& system);

  using answer_state = troupe::detail::shared_state<bulk_bytes>;
  std::mutex mutex_;
  std::uint64_t next_ = 1;
  std::unordered_map<std::uint64_t, troupe::detail::intrusive_ptr<answer_state>> waiting_;
};

}  // namespace troupe::net::detail
