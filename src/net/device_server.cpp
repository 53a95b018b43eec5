#include "net/device_server.hpp"

#include <array>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "device/device_manager.hpp"
#include "net/bulk_bytes.hpp"
#include "net/device_messages.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/device/detail/buffer_state.hpp"
#include "troupe/device/detail/queue_state.hpp"
#include "troupe/device/device.hpp"
#include "troupe/device/opencl_type_name.hpp"
#include "troupe/net/cluster.hpp"

namespace troupe::net::detail {

namespace {

using troupe::detail::adopt_ref;
using troupe::detail::buffer_state;
using troupe::detail::command;
using troupe::detail::dependency_list;
using troupe::detail::intrusive_ptr;
using troupe::detail::queue_state;
using troupe::detail::ref_counted;
using troupe::detail::state_base;

/// Host bytes that a write copies from or a read copies to, kept until it has ended.
struct held_bytes final : ref_counted {
  explicit held_bytes(bulk_bytes held) : data(std::move(held)) {}
  bulk_bytes data;
};

/// A launch argument's OpenCL type name as one of the literals launch_argument points to
/// (the check of arguments against the kernel's parameters compares them), or "".
const char* type_literal(const std::string& name) {
  static constexpr std::array<const char*, 10> known{
      opencl_type_name<float>(),        opencl_type_name<double>(),
      opencl_type_name<std::int8_t>(),  opencl_type_name<std::uint8_t>(),
      opencl_type_name<std::int16_t>(), opencl_type_name<std::uint16_t>(),
      opencl_type_name<std::int32_t>(), opencl_type_name<std::uint32_t>(),
      opencl_type_name<std::int64_t>(), opencl_type_name<std::uint64_t>()};
  for (const char* literal : known)
    if (name == literal) return literal;
  return "";
}

/// What the server holds for its clients, keyed by (client node, the client's id).
class device_server_state final : public std::enable_shared_from_this<device_server_state> {
 public:
  explicit device_server_state(actor_system& system)
      : node_(system.nodes().this_node()),
        devices_(troupe::detail::device_manager::of(system).devices()) {}

  void setup(const device_setup& s) {
    const key k{s.client, s.id};
    std::lock_guard guard{mutex_};
    switch (s.what) {
      case device_setup::kind::allocate:
        try {
          memory_[k] = troupe::detail::allocate_buffer(*device_at(s.device).state(), s.bytes,
                                                       "device::allocate");
        } catch (const error& e) {
          failed_memory_[k] = e;
        }
        return;
      case device_setup::kind::release_memory:
        memory_.erase(k);
        failed_memory_.erase(k);
        return;
      case device_setup::kind::open_queue:
        try {
          queues_[k] = device_at(s.device).state()->make_queue();
        } catch (const error& e) {
          failed_queues_[k] = e;
        }
        return;
      case device_setup::kind::close_queue:
        queues_.erase(k);
        failed_queues_.erase(k);
        return;
      case device_setup::kind::release_program:
        programs_.erase(k);
        return;
    }
  }

  future<build_result> build(const build_request& r) {
    if (r.device >= devices_.size())
      return make_exceptional_future<build_result>(no_device(r.device));
    return device_at(r.device)
        .compile(r.source, r.options)
        .then(inline_execution,
              [self = shared_from_this(), k = key{r.client, r.id}](program built) {
                build_result result{built.build_log(), built.from_cache()};
                std::lock_guard guard{self->mutex_};
                self->programs_[k] = std::move(built);
                return result;
              });
  }

  future<bulk_bytes> run(device_command& c, bulk_bytes& data) {
    try {
      return issue(c, data);
    } catch (const error& e) {
      return make_exceptional_future<bulk_bytes>(e);
    }
  }

 private:
  using key = std::pair<node_id, std::uint64_t>;
  using event_key = std::tuple<node_id, std::uint64_t, std::uint64_t>;

  const troupe::device& device_at(std::uint32_t index) const {
    if (index >= devices_.size()) throw no_device(index);
    return devices_[index];
  }
  error no_device(std::uint32_t index) const {
    return error{errc::invalid_argument, "node " + std::to_string(node_) + " has no device " +
                                             std::to_string(index) + " (it has " +
                                             std::to_string(devices_.size()) + ")"};
  }
  // Under mutex_.
  intrusive_ptr<buffer_state> memory(node_id client, std::uint64_t id, const char* what) {
    if (auto it = memory_.find({client, id}); it != memory_.end()) return it->second;
    if (auto it = failed_memory_.find({client, id}); it != failed_memory_.end()) throw it->second;
    throw error{errc::no_state, std::string{what} + ": node " + std::to_string(node_) +
                                    " holds no memory " + std::to_string(id) + " of node " +
                                    std::to_string(client)};
  }

  future<bulk_bytes> issue(device_command& c, bulk_bytes& data) {
    std::unique_lock guard{mutex_};
    auto found = queues_.find({c.client, c.queue});
    if (auto failed = failed_queues_.find({c.client, c.queue}); failed != failed_queues_.end())
      throw failed->second;
    if (found == queues_.end())
      throw error{errc::no_state, "node " + std::to_string(node_) + " has no queue " +
                                      std::to_string(c.queue) + " of node " +
                                      std::to_string(c.client)};
    intrusive_ptr<queue_state> queue = found->second;
    dependency_list deps;
    for (const auto& [queue_id, first, last] : c.waits) {
      if (last < first || last - first > max_waited_commands)
        throw error{errc::invalid_argument, "a wait for commands " + std::to_string(first) +
                                                " to " + std::to_string(last) + " of queue " +
                                                std::to_string(queue_id)};
      for (auto sequence = first; sequence <= last; ++sequence) {
        const event_key k{c.client, queue_id, sequence};
        if (auto it = running_.find(k); it != running_.end())
          deps.add(it->second, false);
        else if (auto failed = failures_.find(k); failed != failures_.end())
          std::rethrow_exception(failed->second);
      }
    }

    command cmd;
    cmd.offset = c.offset;
    cmd.bytes = c.bytes;
    intrusive_ptr<troupe::detail::command_result> result;
    future<bulk_bytes> answer;
    switch (c.what) {
      case device_command::kind::write:
        cmd.what = command::kind::write;
        cmd.caller = "buffer::write";
        cmd.buffer = memory(c.client, c.memory, "write");
        if (data.size() != c.bytes)
          throw error{errc::invalid_argument, "write of " + std::to_string(c.bytes) +
                                                  " bytes came with " +
                                                  std::to_string(data.size())};
        {
          intrusive_ptr<held_bytes> held{new held_bytes(std::move(data)), adopt_ref};
          cmd.host_source = held->data.data();
          cmd.keep_alive = std::move(held);
        }
        break;
      case device_command::kind::read: {
        cmd.what = command::kind::read;
        cmd.caller = "buffer::read";
        cmd.buffer = memory(c.client, c.memory, "read");
        auto read = bulk_bytes::block(c.bytes, c.landing);
        cmd.host_destination = read.data();
        intrusive_ptr<held_bytes> held{new held_bytes(read), adopt_ref};
        cmd.keep_alive = held;
        intrusive_ptr<troupe::detail::void_result> done{
            new troupe::detail::void_result(queue->device().results()), adopt_ref};
        answer = troupe::detail::future_access::make<future<void>>(done->shared())
                     .then(inline_execution, [held] { return held->data; });
        result = std::move(done);
        break;
      }
      case device_command::kind::fill:
        cmd.what = command::kind::fill;
        cmd.caller = "buffer::fill";
        cmd.buffer = memory(c.client, c.memory, "fill");
        if (data.size() == 0 || data.size() > cmd.pattern.size())
          throw error{errc::invalid_argument,
                      "fill: a pattern of " + std::to_string(data.size()) + " bytes"};
        std::memcpy(cmd.pattern.data(), data.data(), data.size());
        cmd.pattern_size = data.size();
        break;
      case device_command::kind::copy:
        cmd.what = command::kind::copy;
        cmd.caller = "buffer::copy_to";
        cmd.buffer = memory(c.client, c.memory, "copy (source)");
        cmd.target = memory(c.client, c.target, "copy (target)");
        cmd.target_offset = c.target_offset;
        break;
      case device_command::kind::launch: {
        cmd.what = command::kind::launch;
        auto program = programs_.find({c.client, c.program});
        if (program == programs_.end())
          throw error{errc::no_state, "launch of kernel '" + c.kernel + "': node " +
                                          std::to_string(node_) + " holds no program " +
                                          std::to_string(c.program) + " of node " +
                                          std::to_string(c.client)};
        cmd.program = program->second.state();
        cmd.kernel = c.kernel;
        cmd.shape.dimensions = c.dimensions;
        for (std::size_t d = 0; d < 3; ++d) {
          cmd.shape.global[d] = c.global[d];
          cmd.shape.local[d] = c.local[d];
          cmd.shape.offset[d] = c.global_offset[d];
        }
        cmd.shape.shared_bytes = c.shared_bytes;
        for (const auto& a : c.arguments) {
          troupe::detail::launch_argument arg;
          arg.what = static_cast<troupe::detail::launch_argument::kind>(a.what);
          if (arg.what == troupe::detail::launch_argument::kind::buffer)
            arg.buffer = memory(c.client, a.memory, "launch argument");
          arg.scalar = a.scalar;
          arg.size = a.size;
          arg.type_name = type_literal(a.type_name);
          cmd.arguments.push_back(std::move(arg));
        }
        break;
      }
      case device_command::kind::mark:
        return mark(c);
    }
    if (!result) {
      intrusive_ptr<troupe::detail::void_result> done{
          new troupe::detail::void_result(queue->device().results()), adopt_ref};
      answer = troupe::detail::future_access::make<future<void>>(done->shared())
                   .then(inline_execution, [] { return bulk_bytes{}; });
      result = std::move(done);
    }
    const event_key k{c.client, c.queue, c.sequence};
    intrusive_ptr<state_base> state{&result->state()};
    running_[k] = state;
    last_on_queue_[{c.client, c.queue}] = state;
    guard.unlock();
    queue->submit(std::move(cmd), deps, std::move(result));
    return std::move(answer).then(
        inline_execution, [self = shared_from_this(), k](future<bulk_bytes> ended) -> bulk_bytes {
          try {
            auto answered = ended.get();
            self->forget(k, nullptr);
            return answered;
          } catch (...) {
            self->forget(k, std::current_exception());
            throw;
          }
        });
  }

  /// Ends once the last command issued on the queue so far has: the queue runs in order. Its
  /// own errors went to its own answer.
  future<bulk_bytes> mark(const device_command& c) {
    auto last = last_on_queue_.find({c.client, c.queue});
    if (last == last_on_queue_.end() || last->second->is_ready())
      return make_ready_future(bulk_bytes{});
    auto done = std::make_shared<promise<bulk_bytes>>();
    auto answer = done->get_future();
    last->second->attach(
        troupe::detail::make_continuation({}, [done] { done->set_value(bulk_bytes{}); }));
    return answer;
  }

  /// The command `k` has ended, with `failure` if it failed: commands that depend on it and
  /// come later fail with it (remembered for the latest remembered_failures).
  void forget(const event_key& k, std::exception_ptr failure) {
    std::lock_guard guard{mutex_};
    running_.erase(k);
    if (failure) {
      failures_.emplace(k, std::move(failure));
      failure_order_.push_back(k);
      if (failure_order_.size() > remembered_failures) {
        failures_.erase(failure_order_.front());
        failure_order_.pop_front();
      }
    }
    if (auto last = last_on_queue_.find({std::get<0>(k), std::get<1>(k)});
        last != last_on_queue_.end() && last->second->is_ready())
      last_on_queue_.erase(last);
  }

  node_id node_;
  const std::vector<troupe::device>& devices_;
  std::mutex mutex_;  // the handlers run on the actor, the continuations where commands end
  std::map<key, intrusive_ptr<buffer_state>> memory_;
  std::map<key, error> failed_memory_;
  std::map<key, intrusive_ptr<queue_state>> queues_;
  std::map<key, error> failed_queues_;
  std::map<key, program> programs_;
  /// Commands not ended yet, that later commands of other queues may wait for on the device.
  std::map<event_key, intrusive_ptr<state_base>> running_;
  /// Commands that failed, for those that depend on them and arrive after they ended.
  static constexpr std::size_t remembered_failures = 4096;
  // The most commands one wait may name (a write of that many landing blocks).
  static constexpr std::uint64_t max_waited_commands = std::uint64_t{1} << 20;
  std::map<event_key, std::exception_ptr> failures_;
  std::deque<event_key> failure_order_;
  /// The last command issued on each queue, while it runs.
  std::map<key, intrusive_ptr<state_base>> last_on_queue_;
};

}  // namespace

device_description device_description::of(const device_info& info) {
  device_description d;
  d.name = info.name;
  d.vendor = info.vendor;
  d.driver = info.driver;
  d.backend = static_cast<std::uint8_t>(info.backend);
  d.type = static_cast<std::uint8_t>(info.type);
  d.global_memory = info.global_memory;
  d.compute_units = info.compute_units;
  d.max_work_group_size = info.max_work_group_size;
  d.versions = {info.opencl_version.major, info.opencl_version.minor, info.compute_capability.major,
                info.compute_capability.minor};
  return d;
}

device_info device_description::info_on(node_id node) const {
  device_info info;
  info.name = name;
  info.vendor = vendor;
  info.driver = driver;
  info.backend = static_cast<troupe::backend>(backend);
  info.type = static_cast<device_type>(type);
  info.global_memory = global_memory;
  info.compute_units = compute_units;
  info.max_work_group_size = max_work_group_size;
  info.opencl_version = {versions[0], versions[1]};
  info.compute_capability = {versions[2], versions[3]};
  info.node = node;
  info.local = false;
  return info;
}

message describe_devices(actor_system& system, actor& server) {
  if (!server) server = spawn_device_server(system);
  std::vector<device_description> list;
  for (const auto& d : troupe::detail::device_manager::of(system).devices())
    list.push_back(device_description::of(d.info()));
  return make_message(server, std::move(list));
}

actor spawn_device_server(actor_system& system) {
  auto state = std::make_shared<device_server_state>(system);
  return system.spawn([state](event_based_actor*) -> behavior {
    return {
        [state](device_setup& s) { state->setup(s); },
        [state](build_request& r) { return state->build(r); },
        [state](device_command& c, bulk_bytes& data) { return state->run(c, data); },
    };
  });
}

}  // namespace troupe::net::detail
