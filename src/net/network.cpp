#include "net/network.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "net/actor_proxy.hpp"
#include "net/device_messages.hpp"
#include "net/device_server.hpp"
#include "net/program_fingerprint.hpp"
#include "net/service_messages.hpp"
#include "support/mpi/mpi_owner.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/core/request.hpp"
#include "troupe/core/serialization/types.hpp"

namespace troupe::net::detail {

namespace {

// bench-net net_bandwidth decided it: aggregation buffers of 64 KiB (segments: wire.hpp).
constexpr std::size_t buffer_bytes = 64 * 1024;
// Exit reasons kept for watches that arrive after their actor ended.
constexpr std::size_t remembered_ends = 4096;

std::string node_name(node_id node) {
  return "node " + std::to_string(node);
}

/// Whether this host has a core for each node's workers and progress thread: then a progress
/// thread may poll while idle, else it must yield at once (a ping-pong on two oversubscribed
/// cores took 4 times as long with polling: bench-net, 2026-12-06).
bool cores_to_spare(MPI_Comm comm, std::size_t workers) {
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int nodes_here = 1;
  MPI_Comm_size(host, &nodes_here);
  MPI_Comm_free(&host);
  const std::size_t threads_needed = static_cast<std::size_t>(nodes_here) * (workers + 1);
  return threads_needed <= std::thread::hardware_concurrency();
}

}  // namespace

// -- the envelope of a message frame ------------------------------------------
//
// [u64 receiver id][bool sender?][u32 node][u64 id][u64 message id][stages][u64 codec key]
// [elements]. The sender is written by hand: a request's sender is kept by the pending table,
// not exported for good.

network::network(actor_system& system) : system_(system) {}

network::~network() = default;

void network::join() {
  if (system_.settings().nodes == "off" || !troupe::detail::running_under_mpi()) {
    cluster_ = std::make_unique<troupe::cluster>(0, 1);
    return;
  }
  const int provided = troupe::detail::initialize_mpi(nullptr, nullptr);
  if (provided < MPI_THREAD_MULTIPLE)
    throw error(errc::invalid_argument,
                "net: MPI runs at thread level " + std::to_string(provided) +
                    ", below MPI_THREAD_MULTIPLE, which the net layer's progress thread needs "
                    "beside the program's own MPI calls; initialize MPI with MPI_Init_thread and "
                    "MPI_THREAD_MULTIPLE, or let troupe initialize it");
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  self_ = static_cast<node_id>(rank);
  size_ = static_cast<std::size_t>(ranks);
  std::vector<std::uint64_t> fingerprints(size_);
  std::uint64_t mine = program_fingerprint();
  MPI_Allgather(&mine, 1, MPI_UINT64_T, fingerprints.data(), 1, MPI_UINT64_T, comm);
  for (std::size_t node = 0; node < size_; ++node) {
    if (fingerprints[node] == fingerprints[0]) continue;
    MPI_Comm_free(&comm);
    char first[17];
    char other[17];
    std::snprintf(first, sizeof first, "%016llx", static_cast<unsigned long long>(fingerprints[0]));
    std::snprintf(other, sizeof other, "%016llx",
                  static_cast<unsigned long long>(fingerprints[node]));
    throw error(errc::invalid_argument, "net: node " + std::to_string(node) +
                                            " runs another program than node 0 " + "(build " +
                                            other + " against " + first +
                                            "); every node of a job must run the same binary");
  }
  cluster_ = std::make_unique<troupe::cluster>(self_, static_cast<node_id>(size_));
  if (size_ == 1) {
    MPI_Comm_free(&comm);
    return;
  }
  spawn_service();
  transport_ = std::make_unique<transport>(
      comm, *this, buffer_bytes, cores_to_spare(comm, system_.settings().resolved_threads()),
      system_.default_executor());
  system_.default_executor().work_started();
  holding_ = true;
  transport_->start();
}

// -- the service actor: spawn and lookup by name ------------------------------

void network::spawn_service() {
  std::weak_ptr<network> weak = weak_from_this();
  service_ = system_.spawn([weak](event_based_actor* self) -> behavior {
    return {
        [self, weak](spawn_request& request) {
          auto promise = self->make_response_promise();
          const auto& types = self->system().settings().actor_types;
          auto it = types.find(request.name);
          if (it == types.end()) {
            promise.deliver(error{errc::invalid_argument,
                                  "spawn on " + node_name(self->system().nodes().this_node()) +
                                      ": no actor type is registered as '" + request.name + "'"});
            return;
          }
          try {
            promise.deliver(it->second.spawn(self->system(), request.args));
          } catch (const error& failure) {
            promise.deliver(failure);
          } catch (const std::exception& failure) {
            promise.deliver(error{errc::runtime_error, "spawn of actor type '" + request.name +
                                                           "' failed: " + failure.what()});
          }
        },
        [self, server = std::make_shared<actor>()](device_list_request&) {
          return describe_devices(self->system(), *server);
        },
        [self, weak](lookup_request& request) {
          auto promise = self->make_response_promise();
          actor found = self->system().registry().get(request.name);
          if (!found) {
            if (auto net = weak.lock()) {
              std::lock_guard guard{net->registry_mutex_};
              auto it = net->draining_registry_.find(request.name);
              if (it != net->draining_registry_.end()) found = it->second;
            }
          }
          if (found)
            promise.deliver(found);
          else
            promise.deliver(error{errc::invalid_argument,
                                  "lookup on " + node_name(self->system().nodes().this_node()) +
                                      ": no actor is registered as '" + request.name + "'"});
        },
    };
  });
}

void network::check_node(node_id node, const char* what) const {
  if (node >= size_)
    throw error(errc::invalid_argument, std::string{what} + " on node " + std::to_string(node) +
                                            ": the job has " + std::to_string(size_) +
                                            (size_ == 1 ? " node" : " nodes") + " (0 to " +
                                            std::to_string(size_ - 1) + ")");
}

future<actor> network::spawn_on(node_id node, const std::string& name, message args) {
  try {
    check_node(node, "spawn");
    if (node == self_) {
      const auto& types = system_.settings().actor_types;
      auto it = types.find(name);
      if (it == types.end())
        throw error(errc::invalid_argument, "spawn on " + node_name(node) +
                                                ": no actor type is registered as '" + name + "'");
      return make_ready_future(it->second.spawn(system_, args));
    }
    const auto& codec = *args.types()->codec();
    if (codec.unencodable != nullptr)
      throw error(errc::invalid_argument, "spawn of '" + name + "' on " + node_name(node) +
                                              ": its arguments " + codec.names +
                                              " cannot cross nodes, because " +
                                              troupe::detail::type_name(*codec.unencodable) +
                                              " has no cereal serialize function");
    return request<actor>(proxy_for(node, service_id), spawn_request{name, std::move(args)});
  } catch (const error& failure) {
    return make_exceptional_future<actor>(failure);
  }
}

future<actor> network::lookup_on(node_id node, const std::string& name) {
  try {
    check_node(node, "lookup");
    if (node == self_) {
      if (auto found = system_.registry().get(name)) return make_ready_future(std::move(found));
      throw error(errc::invalid_argument,
                  "lookup on " + node_name(node) + ": no actor is registered as '" + name + "'");
    }
    return request<actor>(proxy_for(node, service_id), lookup_request{name});
  } catch (const error& failure) {
    return make_exceptional_future<actor>(failure);
  }
}

// -- handles ------------------------------------------------------------------

wire_handle network::encode(const actor& handle) {
  return export_actor(handle, true);
}

wire_handle network::export_actor(const actor& handle, bool keep_alive) {
  if (handle->is_remote()) {
    auto* proxy = static_cast<actor_proxy*>(handle.get());
    if (&proxy->owner() != this)
      throw error(errc::invalid_argument,
                  "net: a handle of another actor system's proxy cannot be sent from this one");
    return {proxy->node(), proxy->remote_id()};
  }
  if (&handle->system() != &system_)
    throw error(errc::invalid_argument, "net: " + handle->description() +
                                            " belongs to another actor system of this process");
  const actor_id id = handle.id();
  bool fresh = false;
  {
    std::lock_guard guard{exports_mutex_};
    auto [it, inserted] = exports_.try_emplace(id);
    fresh = inserted;
    if (inserted) it->second.weak = handle.address();
    if (keep_alive && !it->second.strong) it->second.strong = handle;
  }
  if (fresh) {
    // Runs at once if the actor has ended already; then the entry goes again.
    std::weak_ptr<network> weak = weak_from_this();
    handle->attach_hook([weak, id](const error& reason) {
      if (auto net = weak.lock()) net->actor_ended(id, reason);
    });
  }
  return {self_, id};
}

actor network::exported_actor(actor_id id) {
  if (id == service_id) return service_;
  std::lock_guard guard{exports_mutex_};
  auto it = exports_.find(id);
  return it != exports_.end() ? it->second.weak.lock() : actor{};
}

void network::actor_ended(actor_id id, const error& reason) {
  exported entry;
  {
    std::lock_guard guard{exports_mutex_};
    auto it = exports_.find(id);
    if (it == exports_.end()) return;
    entry = std::move(it->second);
    exports_.erase(it);
    // A watch may still be on its way (sent as the actor ended): it gets the real reason.
    if (ended_order_.size() == remembered_ends) {
      ended_.erase(ended_order_.front());
      ended_order_.pop_front();
    }
    ended_.insert_or_assign(id, reason);
    ended_order_.push_back(id);
  }
  for (node_id watcher : entry.watchers) send_down(watcher, id, reason);
  // entry.strong goes here, outside the lock: releasing it may run on_unreachable.
}

actor network::decode(const wire_handle& wire) {
  if (wire.node >= size_)
    throw error(errc::invalid_argument, "net: a handle names node " + std::to_string(wire.node) +
                                            " of a job of " + std::to_string(size_) + " nodes");
  if (wire.node == self_) return exported_actor(wire.id);
  return proxy_for(wire.node, wire.id);
}

actor network::service_of(node_id node) {
  check_node(node, "service");
  return proxy_for(node, service_id);
}

actor network::proxy_for(node_id node, actor_id id) {
  std::lock_guard guard{proxies_mutex_};
  auto& slot = proxies_[{node, id}];
  if (slot != nullptr && slot->try_add_strong_ref()) return actor::adopt(slot);
  // None, or one that is going (its on_unreachable waits for this lock): a fresh one.
  slot = new actor_proxy(system_, shared_from_this(), node, id);
  return actor::adopt(slot);
}

void network::forget(const actor_proxy& proxy) noexcept {
  std::lock_guard guard{proxies_mutex_};
  auto it = proxies_.find({proxy.node(), proxy.remote_id()});
  if (it != proxies_.end() && it->second == &proxy) proxies_.erase(it);
}

// -- sending ------------------------------------------------------------------

void network::refuse(const actor& sender, message_id mid, const error& reason) {
  if (!sender || !mid.is_request()) return;
  sender->enqueue(make_mailbox_element({}, mid.response_id(), {}, reason));
}

namespace {

/// The bytes a message is written into before they go to the transport: one buffer per thread,
/// and a fresh one for a send made while that thread's buffer is in use (writing a message can
/// release the last handle to an actor whose end sends on).
class send_buffer {
 public:
  send_buffer() : bytes_(in_use_ ? own_ : shared_) {
    owner_ = !in_use_;
    in_use_ = true;
    bytes_.clear();
  }
  ~send_buffer() {
    if (owner_) in_use_ = false;
  }
  send_buffer(const send_buffer&) = delete;
  send_buffer& operator=(const send_buffer&) = delete;

  std::vector<std::byte>& bytes() noexcept { return bytes_; }

 private:
  static thread_local std::vector<std::byte> shared_;
  static thread_local bool in_use_;
  std::vector<std::byte> own_;
  std::vector<std::byte>& bytes_;
  bool owner_ = false;
};

thread_local std::vector<std::byte> send_buffer::shared_;
thread_local bool send_buffer::in_use_ = false;

}  // namespace

void network::send(const actor_proxy& proxy, mailbox_element_ptr element) {
  if (closed_.load(std::memory_order_acquire)) {
    refuse(element->sender, element->mid,
           error{errc::request_receiver_down,
                 "request to " + proxy.description() + " failed: the job has ended"});
    return;
  }
  send_buffer buffer;
  output_archive ar{buffer.bytes(), this};
  try {
    write_message(ar, proxy.remote_id(), *element);
  } catch (const std::exception& failure) {
    const error reason{errc::invalid_argument,
                       "send to " + proxy.description() + ": " + failure.what()};
    if (!element->mid.is_response()) {
      refuse(element->sender, element->mid, reason);
      return;
    }
    // A response that cannot cross still answers: the requester gets the error instead.
    element->content = make_message(reason);
    element->stages.clear();
    buffer.bytes().clear();
    output_archive fallback{buffer.bytes(), this};
    write_message(fallback, proxy.remote_id(), *element);
    transmit(proxy, *element, fallback, buffer.bytes());
    return;
  }
  transmit(proxy, *element, ar, buffer.bytes());
}

void network::write_message(output_archive& ar, actor_id receiver, const mailbox_element& element) {
  const auto& codec = *element.content.types()->codec();
  if (codec.unencodable != nullptr)
    throw error(errc::invalid_argument, "a message of " + codec.names +
                                            " cannot cross nodes, because " +
                                            troupe::detail::type_name(*codec.unencodable) +
                                            " has no cereal serialize function");
  ar(static_cast<std::uint64_t>(receiver));
  const bool has_sender = static_cast<bool>(element.sender);
  ar(has_sender);
  if (has_sender) {
    // A sender is not kept alive for other nodes: it lives as long as it does here; a request's
    // sender is kept until its response (track_request).
    const wire_handle wire = export_actor(element.sender, false);
    ar(wire.node, wire.id);
  }
  ar(element.mid.value(), element.stages, codec.key);
  codec.save(element.content, ar, segment_bytes);
}

void network::transmit(const actor_proxy& proxy, mailbox_element& element, output_archive& ar,
                       const std::vector<std::byte>& bytes) {
  track_request(element);
  bool sent = false;
  if (ar.segments().empty() && bytes.size() <= transport_->max_frame_payload()) {
    sent = transport_->send_frame(
        proxy.node(), frame_kind::message, bytes.size(),
        [&](std::byte* out) { std::memcpy(out, bytes.data(), bytes.size()); });
  } else {
    try {
      sent =
          transport_->send_large(proxy.node(), std::vector<std::byte>(bytes.begin(), bytes.end()),
                                 ar.segments(), element.content);
    } catch (const error& failure) {
      untrack_request(element);
      refuse(element.sender, element.mid,
             error{failure.code(), "send to " + proxy.description() + ": " + failure.what()});
      return;
    }
  }
  if (!sent) {
    untrack_request(element);
    refuse(element.sender, element.mid,
           error{errc::request_receiver_down,
                 "request to " + proxy.description() + " failed: the job has ended"});
  }
}

void network::track_request(const mailbox_element& element) {
  if (!element.mid.is_request() || !element.sender || element.sender->is_remote()) return;
  std::lock_guard guard{pending_mutex_};
  pending_[{element.sender.id(), element.mid.sequence()}] = element.sender;
}

void network::untrack_request(const mailbox_element& element) {
  if (!element.mid.is_request() || !element.sender) return;
  actor released;  // outside the lock: releasing it may run on_unreachable
  std::lock_guard guard{pending_mutex_};
  auto it = pending_.find({element.sender.id(), element.mid.sequence()});
  if (it == pending_.end()) return;
  released = std::move(it->second);
  pending_.erase(it);
}

void network::watch(actor_proxy& proxy) {
  if (closed_.load(std::memory_order_acquire) || !transport_) return;
  if (!proxy.try_add_strong_ref()) return;  // going already: nothing left to tell
  {
    std::lock_guard guard{proxies_mutex_};
    watched_.try_emplace({proxy.node(), proxy.remote_id()}, actor::adopt(&proxy));
  }
  const std::uint64_t id = proxy.remote_id();
  transport_->send_frame(proxy.node(), frame_kind::watch, sizeof id,
                         [id](std::byte* out) { std::memcpy(out, &id, sizeof id); });
}

void network::send_down(node_id to, actor_id id, const error& reason) {
  if (!transport_) return;
  send_buffer buffer;
  auto& bytes = buffer.bytes();
  output_archive ar{bytes};
  ar(static_cast<std::uint64_t>(id), reason);
  if (bytes.size() > transport_->max_frame_payload()) {
    bytes.clear();
    ar(static_cast<std::uint64_t>(id),
       error{reason.code(), "(its exit reason was too long to send)"});
  }
  transport_->send_frame(to, frame_kind::down, bytes.size(),
                         [&](std::byte* out) { std::memcpy(out, bytes.data(), bytes.size()); });
}

// -- receiving (progress thread) ----------------------------------------------

namespace {

/// Reads what network::send wrote; throws with what went wrong, keeping what it read so far.
void read_envelope(input_archive& ar, handle_decoder& handles, std::uint64_t& receiver,
                   actor& sender, message_id& mid, std::vector<actor>& stages, std::uint64_t& key) {
  ar(receiver);
  bool has_sender = false;
  ar(has_sender);
  if (has_sender) {
    wire_handle wire;
    ar(wire.node, wire.id);
    sender = handles.decode(wire);
  }
  std::uint64_t mid_value = 0;
  ar(mid_value);
  mid = message_id::from_value(mid_value);
  ar(stages, key);
}

}  // namespace

void network::receive_message(node_id from, std::span<const std::byte> payload) {
  input_archive ar{payload, this};
  std::uint64_t receiver = 0;
  actor sender;
  message_id mid;
  std::vector<actor> stages;
  std::uint64_t key = 0;
  const troupe::detail::message_codec* codec = nullptr;
  try {
    read_envelope(ar, *this, receiver, sender, mid, stages, key);
    codec = troupe::detail::find_codec(key);
    if (codec == nullptr || codec->load == nullptr)
      throw error(errc::invalid_argument, "its type list is unknown here");
    // A small frame holds no segments: every block in it is read from it.
    message content{troupe::detail::intrusive_ptr<troupe::detail::message_data>{
        codec->load(ar, troupe::detail::no_segments), troupe::detail::adopt_ref}};
    deliver(from, receiver, std::move(sender), mid, std::move(stages), std::move(content));
  } catch (const std::exception& failure) {
    fail_arrival(from, receiver, sender, mid, codec, failure.what());
  }
}

void network::fail_arrival(node_id from, actor_id receiver, const actor& sender, message_id mid,
                           const troupe::detail::message_codec* codec, const std::string& what) {
  const error reason{errc::invalid_argument,
                     "a message " + (codec != nullptr ? "of " + codec->names + " " : "") + "from " +
                         node_name(from) + " to actor #" + std::to_string(receiver) + " on " +
                         node_name(self_) + " could not be decoded: " + what};
  if (sender && mid.is_request()) {
    refuse(sender, mid, reason);
    return;
  }
  if (mid.is_response()) {
    // The requester is waiting: it gets the error as its response.
    deliver(from, receiver, actor{}, mid, {}, make_message(reason));
    return;
  }
  std::fprintf(stderr, "troupe: dropped %s\n", reason.what());
}

void network::deliver(node_id from, actor_id receiver, actor sender, message_id mid,
                      std::vector<actor> stages, message content) {
  actor target;
  if (mid.is_response()) {
    std::lock_guard guard{pending_mutex_};
    auto it = pending_.find({receiver, mid.sequence()});
    if (it != pending_.end()) {
      target = std::move(it->second);
      pending_.erase(it);
    }
  }
  if (!target) target = exported_actor(receiver);
  if (!target) {
    refuse(sender, mid,
           error{errc::request_receiver_down,
                 "request to actor #" + std::to_string(receiver) + " on " + node_name(self_) +
                     " from " + node_name(from) + " failed: the actor has ended"});
    return;
  }
  auto element = std::make_unique<mailbox_element>();
  element->sender = std::move(sender);
  element->mid = mid;
  element->stages = std::move(stages);
  element->content = std::move(content);
  target->enqueue(std::move(element));
}

void network::on_frame(node_id from, frame_kind kind, std::span<const std::byte> payload) {
  switch (kind) {
    case frame_kind::message:
      receive_message(from, payload);
      return;
    case frame_kind::watch: {
      if (payload.size() != sizeof(std::uint64_t))
        transport_->abort_job("net: a damaged watch frame from " + node_name(from));
      const std::byte* at = payload.data();
      const auto id = get<std::uint64_t>(at);
      if (id == service_id) return;
      std::optional<error> ended;
      {
        std::lock_guard guard{exports_mutex_};
        if (auto it = exports_.find(id); it != exports_.end()) {
          it->second.watchers.push_back(from);
        } else if (auto gone = ended_.find(id); gone != ended_.end()) {
          ended = gone->second;
        } else {
          ended =
              error{errc::unreachable, "actor #" + std::to_string(id) + " on " + node_name(self_) +
                                           " had ended before " + node_name(from) +
                                           " watched it (its exit reason is forgotten)"};
        }
      }
      if (ended) send_down(from, id, *ended);
      return;
    }
    case frame_kind::down: {
      std::uint64_t id = 0;
      error reason;
      try {
        input_archive ar{payload};
        ar(id, reason);
      } catch (const std::exception& failure) {
        transport_->abort_job("net: a damaged down frame from " + node_name(from) + ": " +
                              failure.what());
      }
      actor proxy;
      {
        std::lock_guard guard{proxies_mutex_};
        auto it = watched_.find({from, id});
        if (it == watched_.end()) return;
        proxy = std::move(it->second);
        watched_.erase(it);
      }
      static_cast<actor_proxy*>(proxy.get())
          ->remote_ended(error{reason.code(), node_name(from) + ": " + reason.what()});
      return;
    }
    case frame_kind::large:
      return;  // the transport's own
  }
}

namespace {

/// A large message whose header was read: its segments go into the message's own blocks.
class large_message final : public incoming_large {
 public:
  large_message(network& net, node_id from, std::vector<std::byte> header)
      : net_(net), from_(from), header_(std::move(header)) {}

  std::vector<std::span<std::byte>> destinations() override { return destinations_; }

  void complete() override {
    if (failure_) {
      net_.fail_arrival(from_, receiver_, sender_, mid_, codec_, *failure_);
      return;
    }
    net_.deliver(from_, receiver_, std::move(sender_), mid_, std::move(stages_),
                 std::move(content_));
  }

  network& net_;
  node_id from_;
  std::vector<std::byte> header_;
  std::vector<std::vector<std::byte>> scratch_;
  std::vector<std::span<std::byte>> destinations_;
  std::optional<std::string> failure_;
  const troupe::detail::message_codec* codec_ = nullptr;
  std::uint64_t receiver_ = 0;
  actor sender_;
  message_id mid_;
  std::vector<actor> stages_;
  message content_;
};

}  // namespace

std::unique_ptr<incoming_large> network::on_large_header(
    node_id from, std::vector<std::byte> header, const std::vector<std::uint64_t>& announced) {
  auto result = std::make_unique<large_message>(*this, from, std::move(header));
  auto& large = *result;
  const troupe::detail::message_codec* codec = nullptr;
  try {
    input_archive ar{large.header_, this};
    std::uint64_t key = 0;
    read_envelope(ar, *this, large.receiver_, large.sender_, large.mid_, large.stages_, key);
    codec = troupe::detail::find_codec(key);
    if (codec == nullptr || codec->load == nullptr)
      throw error(errc::invalid_argument, "its type list is unknown here");
    large.content_ = message{troupe::detail::intrusive_ptr<troupe::detail::message_data>{
        codec->load(ar, segment_bytes), troupe::detail::adopt_ref}};
    const auto& places = ar.segments();
    bool fits = places.size() == announced.size();
    for (std::size_t i = 0; fits && i < places.size(); ++i) fits = places[i].size() == announced[i];
    if (!fits) throw error(errc::invalid_argument, "its blocks differ from those announced");
    large.destinations_ = places;
  } catch (const std::exception& failure) {
    large.failure_ = failure.what();
    large.codec_ = codec;
    // The blocks still arrive, for the stream to go on: into scratch memory.
    large.content_ = message{};
    large.destinations_.clear();
    try {
      for (auto bytes : announced) {
        large.scratch_.emplace_back(bytes);
        large.destinations_.emplace_back(large.scratch_.back().data(), bytes);
      }
    } catch (const std::bad_alloc&) {
      transport_->abort_job("net: " + node_name(self_) +
                            " cannot hold the blocks of a message from " + node_name(from) +
                            " that it could not decode either (" + failure.what() + ")");
    }
  }
  return result;
}

bool network::locally_quiet() {
  auto wakeups = system_.scheduler().quiet_wakeups();
  const bool quiet = wakeups && wakeups == last_wakeups_ && system_.timers().active() == 0 &&
                     system_.scheduler().work_in_flight() == 1;
  last_wakeups_ = wakeups;
  return quiet;
}

void network::on_job_done() {
  if (holding_) {
    holding_ = false;
    system_.default_executor().work_finished();
  }
}

// -- shutting down ------------------------------------------------------------

void network::shutdown_started() noexcept {
  if (!transport_) return;  // a cluster of one ends as any actor system does
  {
    std::lock_guard guard{registry_mutex_};
    draining_registry_ = system_.registry().snapshot();
  }
  transport_->begin_draining();
}

void network::stop() noexcept {
  if (transport_) transport_->stop();
  closed_.store(true, std::memory_order_release);
  // Released outside the locks: releasing a handle may run on_unreachable, which locks again.
  std::map<std::pair<node_id, actor_id>, actor> watched;
  {
    std::lock_guard guard{proxies_mutex_};
    watched.swap(watched_);
  }
  for (auto& [key, proxy] : watched)
    static_cast<actor_proxy*>(proxy.get())
        ->remote_ended(error{errc::system_gone, node_name(key.first) + " has left the job"});
  decltype(pending_) pending;
  {
    std::lock_guard guard{pending_mutex_};
    pending.swap(pending_);
  }
  for (auto& [key, sender] : pending)
    sender->enqueue(make_mailbox_element(
        {}, message_id::make_request(key.second).response_id(), {},
        error{errc::request_receiver_down,
              "a request from " + node_name(self_) + " got no response before the job ended"}));
  decltype(exports_) exports;
  {
    std::lock_guard guard{exports_mutex_};
    exports.swap(exports_);
  }
  {
    std::lock_guard guard{registry_mutex_};
    draining_registry_.clear();
  }
  service_ = actor{};
}

}  // namespace troupe::net::detail
