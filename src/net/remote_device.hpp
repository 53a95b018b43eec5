#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe::net::detail {

/// What the remote devices of one process share: their node, and the ids it gives out for
/// memory, queues and programs on other nodes' servers.
struct remote_ids {
  node_id self = 0;
  std::atomic<std::uint64_t> next{1};
  std::uint64_t take() noexcept { return next.fetch_add(1, std::memory_order_relaxed); }
};

/// A device of another node, as one more backend of the device layer: every call becomes a
/// message to that node's device server (device_server.hpp), which issues it on the device and
/// answers when it has ended. Messages to one node keep their order, and the server issues
/// them in that order, so the server's queues run in the order the frontend issued.
class remote_device final : public troupe::detail::backend_device {
 public:
  /// Device `index` of `node`, served by `server`.
  remote_device(device_info described, actor server, std::uint32_t index,
                std::shared_ptr<remote_ids> ids);

  std::unique_ptr<troupe::detail::backend_memory> allocate(std::size_t bytes) override;
  std::unique_ptr<troupe::detail::backend_host_memory> allocate_host(std::size_t bytes) override;
  std::unique_ptr<troupe::detail::backend_queue> make_queue() override;
  std::unique_ptr<troupe::detail::backend_program> build(const std::string& source,
                                                         const std::string& options) override;
  std::optional<future<std::unique_ptr<troupe::detail::backend_program>>> build_elsewhere(
      const std::string& source, const std::string& options) override;
  std::unique_ptr<troupe::detail::backend_program> load(std::span<const std::byte> binary) override;
  std::string cache_identity() const override;
  bool caches_on_disk() const noexcept override { return false; }
  const void* domain() const noexcept override { return this; }
  const troupe::detail::device_waits& waits() const noexcept override { return waits_; }

  /// "node 1, device 'X'": what errors from this device begin with.
  const std::string& where() const noexcept { return where_; }
  const actor& server() const noexcept { return server_; }
  /// Where this device's commands are sent from (a command_channel).
  const actor& commands() const noexcept { return commands_; }
  std::uint32_t index() const noexcept { return index_; }
  remote_ids& ids() noexcept { return *ids_; }

 private:
  actor server_;
  actor commands_;
  std::uint32_t index_;
  std::shared_ptr<remote_ids> ids_;
  std::string where_;
  troupe::detail::device_waits waits_;
};

}  // namespace troupe::net::detail
