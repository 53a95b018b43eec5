#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/transport.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/core/serialization/output_archive.hpp"
#include "troupe/core/serialization/wire_handle.hpp"
#include "troupe/net/cluster.hpp"

namespace troupe::net::detail {

class actor_proxy;

/// One node's part of the job: it turns handles into wire handles and back, sends what proxies
/// get, delivers what arrives, keeps exported actors reachable, and takes part in the search
/// for the end of the job. Owned by the actor system (through an extension) and by proxies.
class network final : public std::enable_shared_from_this<network>,
                      public handle_encoder,
                      public handle_decoder,
                      public frame_handler {
 public:
  // -- constructors ---------------------------------------------------------

  explicit network(actor_system& system);
  ~network() override;

  /// Joins the job under MPI (collective), or makes a cluster of one.
  void join();

  // -- properties -----------------------------------------------------------

  actor_system& system() noexcept { return system_; }
  troupe::cluster& nodes() noexcept { return *cluster_; }
  node_id self() const noexcept { return self_; }
  std::size_t size() const noexcept { return size_; }

  // -- operations -----------------------------------------------------------

  /// Sends what a proxy of (node, id) got.
  void send(const actor_proxy& proxy, mailbox_element_ptr element);
  /// Asks `node` to report when its actor `id` ends.
  void watch(actor_proxy& proxy);
  /// A proxy has no handle left.
  void forget(const actor_proxy& proxy) noexcept;

  future<actor> spawn_on(node_id node, const std::string& name, message args);
  /// The service actor of another node (spawn, lookup, device lists).
  actor service_of(node_id node);
  future<actor> lookup_on(node_id node, const std::string& name);

  /// The system's destructor has begun.
  void shutdown_started() noexcept;
  /// Everything is done: delivers what is in flight, ends the proxies.
  void stop() noexcept;

  // -- handle_encoder / handle_decoder --------------------------------------

  wire_handle encode(const actor& handle) override;
  actor decode(const wire_handle& wire) override;

  // -- frame_handler (progress thread) --------------------------------------

  void on_frame(node_id from, frame_kind kind, std::span<const std::byte> payload) override;
  std::unique_ptr<incoming_large> on_large_header(
      node_id from, std::vector<std::byte> header,
      const std::vector<std::uint64_t>& announced) override;
  bool locally_quiet() override;
  void on_job_done() override;

  /// Delivers a decoded message (public for the large-message path).
  void deliver(node_id from, actor_id receiver, actor sender, message_id mid,
               std::vector<actor> stages, message content);
  /// Answers a request that could not be delivered.
  void refuse(const actor& sender, message_id mid, const error& reason);
  /// A message that arrived but cannot be read: its requester (or requester-to-be, for a
  /// response) gets the error; an asynchronous message is reported on stderr.
  void fail_arrival(node_id from, actor_id receiver, const actor& sender, message_id mid,
                    const troupe::detail::message_codec* codec, const std::string& what);

 private:
  struct exported {
    actor_addr weak;
    actor strong;                   // while it may be used from other nodes
    std::vector<node_id> watchers;  // nodes that want to hear of its end
  };

  wire_handle export_actor(const actor& handle, bool keep_alive);
  actor exported_actor(actor_id id);
  void actor_ended(actor_id id, const error& reason);
  actor proxy_for(node_id node, actor_id id);
  void send_down(node_id to, actor_id id, const error& reason);
  void receive_message(node_id from, std::span<const std::byte> payload);
  void check_node(node_id node, const char* what) const;
  void spawn_service();
  void write_message(output_archive& ar, actor_id receiver, const mailbox_element& element);
  void transmit(const actor_proxy& proxy, mailbox_element& element, output_archive& ar,
                const std::vector<std::byte>& bytes);
  void track_request(const mailbox_element& element);
  void untrack_request(const mailbox_element& element);

  actor_system& system_;
  node_id self_ = 0;
  std::size_t size_ = 1;
  std::unique_ptr<troupe::cluster> cluster_;
  std::unique_ptr<transport> transport_;
  bool holding_ = false;  // a work_started keeps the system's destructor waiting for the job
  std::atomic<bool> closed_{false};
  std::optional<std::uint64_t> last_wakeups_;
  actor service_;

  std::mutex exports_mutex_;
  std::unordered_map<actor_id, exported> exports_;
  std::unordered_map<actor_id, error> ended_;  // the latest exported actors that ended
  std::deque<actor_id> ended_order_;

  std::mutex proxies_mutex_;
  std::map<std::pair<node_id, actor_id>, actor_proxy*> proxies_;
  std::map<std::pair<node_id, actor_id>, actor> watched_;  // kept until their actor ends

  std::mutex pending_mutex_;
  // Requests sent to other nodes, by (sender id, sequence): keeps the sender until its response.
  std::map<std::pair<actor_id, std::uint64_t>, actor> pending_;

  std::mutex registry_mutex_;
  std::unordered_map<std::string, actor> draining_registry_;  // served while the job ends
};

/// The network of `system`, joined on first use (net_extension.cpp).
network& network_of(actor_system& system);

}  // namespace troupe::net::detail
