#include "net/remote_device.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "net/bulk_bytes.hpp"
#include "net/command_channel.hpp"
#include "net/device_messages.hpp"
#include "net/landing_pool.hpp"
#include "net/remote_event.hpp"
#include "troupe/core/request.hpp"

namespace troupe::net::detail {

namespace {

using troupe::detail::backend_host_memory;
using troupe::detail::backend_kernel;
using troupe::detail::backend_memory;
using troupe::detail::backend_program;
using troupe::detail::backend_queue;
using troupe::detail::event_ptr;
using troupe::detail::intrusive_ptr;
using troupe::detail::wait_list;

/// Memory on the server, named by an id of this process.
class remote_memory final : public backend_memory {
 public:
  remote_memory(remote_device& device, std::size_t size)
      : device_(device), id_(device.ids().take()) {
    bytes = size;
    send(device_.server(), device_setup{device_setup::kind::allocate, device_.ids().self, id_,
                                        device_.index(), size});
  }
  ~remote_memory() override {
    send(device_.server(),
         device_setup{device_setup::kind::release_memory, device_.ids().self, id_, 0, 0});
  }
  std::uint64_t id() const noexcept { return id_; }

 private:
  remote_device& device_;
  std::uint64_t id_;
};

/// Host memory for copies to and from a remote device: the copies go through messages, so
/// ordinary memory serves.
class remote_host_memory final : public backend_host_memory {
 public:
  explicit remote_host_memory(std::size_t size) {
    data = size == 0 ? nullptr : std::malloc(size);
    if (size != 0 && data == nullptr)
      throw error{errc::out_of_device_memory, "device::allocate_host: " + std::to_string(size) +
                                                  " bytes of host memory are not to be had"};
    bytes = size;
  }
  ~remote_host_memory() override { std::free(data); }
};

class remote_kernel final : public backend_kernel {
 public:
  remote_kernel(std::string kernel_name, std::uint64_t program) : program_(program) {
    name = std::move(kernel_name);
    // The server checks the arguments against the kernel's parameters, where the driver is.
    params_known = false;
  }
  std::uint64_t program() const noexcept { return program_; }

 private:
  std::uint64_t program_;
};

class remote_program final : public backend_program {
 public:
  remote_program(remote_device& device, std::uint64_t id, build_result built)
      : device_(device), id_(id), built_(std::move(built)) {}
  ~remote_program() override {
    send(device_.server(),
         device_setup{device_setup::kind::release_program, device_.ids().self, id_, 0, 0});
  }
  std::vector<std::byte> binary() const override { return {}; }
  std::string build_log() const override { return built_.log; }
  bool from_cache() const noexcept override { return built_.from_cache; }
  std::unique_ptr<backend_kernel> kernel(const std::string& name) override {
    return std::make_unique<remote_kernel>(name, id_);
  }

 private:
  remote_device& device_;
  std::uint64_t id_;
  build_result built_;
};

std::uint64_t memory_id(backend_memory& memory) {
  return static_cast<remote_memory&>(memory).id();
}

/// A queue on the server. Its calls run one at a time (the frontend holds the queue's lock),
/// so the sequence needs no lock.
class remote_queue final : public backend_queue {
 public:
  explicit remote_queue(remote_device& device) : device_(device), id_(device.ids().take()) {
    send(device_.server(),
         device_setup{device_setup::kind::open_queue, device_.ids().self, id_, device_.index(), 0});
  }
  ~remote_queue() override {
    send(device_.server(),
         device_setup{device_setup::kind::close_queue, device_.ids().self, id_, 0, 0});
  }

  // A large write or read goes as blocks of landing_block_bytes, each a command of its own:
  // the server copies one block to or from the device while the next crosses the network.
  // The bytes travel from where they lie, and a read's arrive where they are to go.
  event_ptr write(backend_memory& dst, std::size_t offset, const void* src, std::size_t size, bool,
                  wait_list wait) override {
    auto event = new_event(next_sequence_, blocks_of(size));
    const auto* from = static_cast<const std::byte*>(src);
    for (std::size_t done = 0; done == 0 || done < size; done += landing_block_bytes) {
      auto c = command(device_command::kind::write, wait);
      c.memory = memory_id(dst);
      c.offset = offset + done;
      c.bytes = std::min(landing_block_bytes, size - done);
      auto data = bulk_bytes::borrow(from + done, c.bytes);
      event->await(transmit(std::move(c), std::move(data)));
    }
    return event;
  }

  event_ptr read(backend_memory& src, std::size_t offset, void* dst, std::size_t size, bool,
                 intrusive_ptr<troupe::detail::destination_gate> ready, wait_list wait) override {
    if (ready) troupe::detail::refuse_unstaged_gate(device_.info.name, size);
    auto event = new_event(next_sequence_, blocks_of(size));
    auto* to = static_cast<std::byte*>(dst);
    for (std::size_t done = 0; done == 0 || done < size; done += landing_block_bytes) {
      auto c = command(device_command::kind::read, wait);
      c.memory = memory_id(src);
      c.offset = offset + done;
      c.bytes = std::min(landing_block_bytes, size - done);
      const std::span<std::byte> destination{to + done, c.bytes};
      const auto landing = bulk_bytes::expect(destination);
      c.landing = landing;
      event->await(transmit(std::move(c), {}), destination, landing);
    }
    return event;
  }

  bool stages_reads_of(std::size_t) const noexcept override { return false; }

  event_ptr fill(backend_memory& dst, std::size_t offset, std::size_t size, const void* pattern,
                 std::size_t pattern_size, wait_list wait) override {
    auto c = command(device_command::kind::fill, wait);
    c.memory = memory_id(dst);
    c.offset = offset;
    c.bytes = size;
    return issue(std::move(c), bulk_bytes::copy_of(pattern, pattern_size));
  }

  event_ptr copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                 std::size_t dst_offset, std::size_t size, wait_list wait) override {
    auto c = command(device_command::kind::copy, wait);
    c.memory = memory_id(src);
    c.offset = src_offset;
    c.target = memory_id(dst);
    c.target_offset = dst_offset;
    c.bytes = size;
    return issue(std::move(c), {});
  }

  // Every launch gets an event: the server answers each command, and so reports a launch's
  // failure to the launch's own future.
  event_ptr launch(backend_kernel& kernel, const troupe::detail::launch_shape& shape,
                   std::span<const troupe::detail::kernel_argument> args, wait_list wait,
                   troupe::detail::launch_event) override {
    auto c = command(device_command::kind::launch, wait);
    c.program = static_cast<remote_kernel&>(kernel).program();
    c.kernel = kernel.name;
    c.dimensions = shape.dimensions;
    for (std::size_t d = 0; d < 3; ++d) {
      c.global[d] = shape.global[d];
      c.local[d] = shape.local[d];
      c.global_offset[d] = shape.offset[d];
    }
    c.shared_bytes = shape.shared_bytes;
    c.arguments.reserve(args.size());
    for (const auto& a : args) {
      wire_argument w;
      w.what = static_cast<std::uint8_t>(a.what);
      if (a.what == troupe::detail::kernel_argument::kind::memory) w.memory = memory_id(*a.memory);
      w.scalar = a.scalar;
      w.size = a.size;
      w.type_name = a.type_name;
      c.arguments.push_back(std::move(w));
    }
    return issue(std::move(c), {});
  }

  bool wants_same_queue_waits() const noexcept override { return true; }

  event_ptr mark() override { return issue(command(device_command::kind::mark, {}), {}); }
  void flush() override {}

 private:
  device_command command(device_command::kind what, wait_list wait) {
    device_command c;
    c.what = what;
    c.client = device_.ids().self;
    c.queue = id_;
    c.sequence = next_sequence_++;
    c.waits.reserve(wait.size());
    for (auto* e : wait) {
      auto& remote = static_cast<remote_event&>(*e);
      c.waits.push_back({remote.queue(), remote.first(), remote.last()});
    }
    return c;
  }

  static std::size_t blocks_of(std::size_t size) {
    return std::max<std::size_t>(1, (size + landing_block_bytes - 1) / landing_block_bytes);
  }

  // An event for `commands` commands of this queue from the `first`-th.
  intrusive_ptr<remote_event> new_event(std::uint64_t first, std::size_t commands) {
    return {new remote_event(device_.domain(), id_, first, first + commands - 1, device_.where()),
            troupe::detail::adopt_ref};
  }

  future<bulk_bytes> transmit(device_command c, bulk_bytes data) {
    return static_cast<command_channel&>(*device_.commands().get())
        .request(device_.server(), std::move(c), std::move(data));
  }

  // One command, one event.
  event_ptr issue(device_command c, bulk_bytes data) {
    auto event = new_event(c.sequence, 1);
    event->await(transmit(std::move(c), std::move(data)));
    return event;
  }

  remote_device& device_;
  std::uint64_t id_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace

remote_device::remote_device(device_info described, actor server, std::uint32_t index,
                             std::shared_ptr<remote_ids> ids)
    : server_(std::move(server)),
      commands_(command_channel::make(server_->system())),
      index_(index),
      ids_(std::move(ids)),
      where_("node " + std::to_string(described.node) + ", device '" + described.name + "'") {
  info = std::move(described);
}

std::unique_ptr<backend_memory> remote_device::allocate(std::size_t bytes) {
  if (bytes > info.global_memory)
    throw error{errc::out_of_device_memory,
                "device::allocate: " + std::to_string(bytes) + " bytes on " + where_ +
                    ", which has " + std::to_string(info.global_memory) + " bytes in all"};
  // Answered by no message: an allocation that fails there fails the commands that use it,
  // with the server's error (out of memory, naming the device and node).
  return std::make_unique<remote_memory>(*this, bytes);
}

std::unique_ptr<backend_host_memory> remote_device::allocate_host(std::size_t bytes) {
  return std::make_unique<remote_host_memory>(bytes);
}

std::unique_ptr<backend_queue> remote_device::make_queue() {
  return std::make_unique<remote_queue>(*this);
}

std::unique_ptr<backend_program> remote_device::build(const std::string&, const std::string&) {
  throw error{errc::invalid_argument,
              where_ + ": compiled by its own node (build_elsewhere), never on this one"};
}

std::optional<future<std::unique_ptr<backend_program>>> remote_device::build_elsewhere(
    const std::string& source, const std::string& options) {
  const auto id = ids_->take();
  return request<build_result>(server_, build_request{ids_->self, id, index_, source, options})
      .then(inline_execution,
            [this, id](future<build_result> built) -> std::unique_ptr<backend_program> {
              try {
                return std::make_unique<remote_program>(*this, id, built.get());
              } catch (const error& e) {
                throw error{e.code(), where_ + ": " + e.what()};
              }
            });
}

std::unique_ptr<backend_program> remote_device::load(std::span<const std::byte>) {
  throw error{errc::invalid_argument,
              where_ + ": a device of another node loads no program binaries of this process"};
}

std::string remote_device::cache_identity() const {
  return where_;
}

}  // namespace troupe::net::detail
