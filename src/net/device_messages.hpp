#pragma once

// What a node sends to another node's device server to use that node's devices (remote
// devices), and what comes back. Every id is chosen by the node that uses the device, and is
// unique among that node's ids; the server keys what it holds by (client node, id).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "troupe/core/node_id.hpp"
#include "troupe/device/device_info.hpp"

namespace troupe::net::detail {

/// Asks a node's service actor for its devices; the answer is a message of the device server's
/// handle and a std::vector<device_description>.
struct device_list_request {
  template <class Archive>
  void serialize(Archive&) {}
};

/// One device as the node that drives it describes it (see device_info).
struct device_description {
  std::string name;
  std::string vendor;
  std::string driver;
  std::uint8_t backend = 0;
  std::uint8_t type = 0;
  std::uint64_t global_memory = 0;
  std::uint32_t compute_units = 0;
  std::uint64_t max_work_group_size = 0;
  std::array<std::int32_t, 4> versions{};  // OpenCL major, minor; compute capability major, minor

  static device_description of(const device_info& info);
  /// The info of this device, as a device of `node`.
  device_info info_on(node_id node) const;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, vendor, driver, backend, type, global_memory, compute_units, max_work_group_size,
       versions);
  }
};

/// What a client sets up or drops on the server. No answer: a failure shows in the first
/// command that uses what failed.
struct device_setup {
  enum class kind : std::uint8_t {
    allocate,        // `id`: `bytes` of memory on device `device`
    release_memory,  // `id`
    open_queue,      // `id`: a queue of device `device`
    close_queue,     // `id`
    release_program  // `id`
  };
  kind what = kind::allocate;
  node_id client = 0;
  std::uint64_t id = 0;
  std::uint32_t device = 0;
  std::uint64_t bytes = 0;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(what, client, id, device, bytes);
  }
};

/// Compiles `source` on device `device` as program `id`; the answer is a build_result.
struct build_request {
  node_id client = 0;
  std::uint64_t id = 0;
  std::uint32_t device = 0;
  std::string source;
  std::string options;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(client, id, device, source, options);
  }
};

/// A program built for a client.
struct build_result {
  std::string log;
  bool from_cache = false;  // the server loaded it from its disk cache

  template <class Archive>
  void serialize(Archive& ar) {
    ar(log, from_cache);
  }
};

/// One actual argument of a remote launch (see kernel_argument / launch_argument).
struct wire_argument {
  std::uint8_t what = 0;  // launch_argument::kind
  std::uint64_t memory = 0;
  std::array<std::byte, 16> scalar{};
  std::uint64_t size = 0;
  std::string type_name;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(what, memory, scalar, size, type_name);
  }
};

/// One command on a queue: the `sequence`-th the client issued there. Sent with a second
/// element, a bulk_bytes: a write's bytes, a fill's pattern, empty otherwise. The answer is a
/// bulk_bytes: a read's bytes (bound for the client's `landing`), empty otherwise; or the
/// command's error.
struct device_command {
  enum class kind : std::uint8_t { write, read, fill, copy, launch, mark };
  kind what = kind::write;
  node_id client = 0;
  std::uint64_t queue = 0;
  std::uint64_t sequence = 0;
  std::uint64_t memory = 0;  // write, read, fill; copy: the source
  std::uint64_t target = 0;  // copy
  std::uint64_t offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t landing = 0;  // read
  // launch
  std::uint64_t program = 0;
  std::string kernel;
  std::uint32_t dimensions = 1;
  std::array<std::uint64_t, 3> global{};
  std::array<std::uint64_t, 3> local{};
  std::array<std::uint64_t, 3> global_offset{};
  std::uint64_t shared_bytes = 0;
  std::vector<wire_argument> arguments;
  /// Commands of other queues of the same device to run after: (queue, first sequence, last).
  std::vector<std::array<std::uint64_t, 3>> waits;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(what, client, queue, sequence, memory, target, offset, target_offset, bytes, landing,
       program, kernel, dimensions, global, local, global_offset, shared_bytes, arguments, waits);
  }
};

}  // namespace troupe::net::detail
