#pragma once

// The interface every device backend (opencl/, cuda/) implements. Private to the device layer:
// the public API (device, buffer, queue, program) is written once on top of it.
//
// Threading contract:
// - backend_device and backend_program methods may be called from any thread at any time.
// - The methods of one backend_queue are called by one thread at a time (the frontend holds the
//   queue's lock), from scheduler workers, the completion thread and the device's copy thread.
//   They must never wait for the device, but for the commands that may_block_in() names, which
//   only the copy thread issues.
// - backend_event::query, notify and finish are called by the completion path.
// Failures are thrown as troupe::error with a message that names the operation and the device.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "device/device_waits.hpp"
#include "troupe/async/error.hpp"
#include "troupe/async/future.hpp"
#include "troupe/device/detail/command.hpp"
#include "troupe/device/device_info.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

/// Marks the end of one enqueued command: an OpenCL cl_event or a pooled CUevent.
class backend_event : public ref_counted {
 public:
  /// Events with the same domain can be waited for on the device (in a wait list, or with
  /// cuStreamWaitEvent); any other event is waited for on the host.
  virtual const void* domain() const noexcept = 0;

  /// Never blocks. True once the command has finished; throws troupe::error (errc::device_error)
  /// if it failed.
  virtual bool query() = 0;

  /// Calls `done` once, from a driver thread, when the command has finished or failed. `done`
  /// must not call the driver, and is destroyed on that thread, so it must not own the last
  /// reference to anything whose destructor calls the driver; the frontend's only wakes the
  /// completion thread, which then calls query() and finish().
  virtual void notify(std::function<void()> done) = 0;

  /// Called once by the completion path after query() returned true, before the command's
  /// future is satisfied: host-side work that completes the command (a staged read copies out
  /// of its pinned staging block here and returns the block). Default: nothing.
  virtual void finish() {}
};
using event_ptr = intrusive_ptr<backend_event>;
using wait_list = std::span<backend_event* const>;

/// Device memory of one allocation.
class backend_memory {
 public:
  virtual ~backend_memory() = default;
  std::size_t bytes = 0;
};

/// Page-locked host memory that the device copies from and to asynchronously.
class backend_host_memory {
 public:
  virtual ~backend_host_memory() = default;
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// One formal parameter of a kernel, as far as the backend can tell.
struct kernel_param {
  enum class kind : std::uint8_t {
    global_pointer,
    local_pointer,
    constant_pointer,
    scalar,
    unknown
  };
  kind what = kind::unknown;
  /// Bytes of a by-value parameter; 0 when unknown.
  std::size_t size = 0;
  /// OpenCL: the declared type without qualifiers, spelt short and without spaces ("float*",
  /// "uint"); empty when unknown.
  std::string type_name;
};

/// One actual argument of a launch.
struct kernel_argument {
  enum class kind : std::uint8_t { memory, scalar, local };
  kind what = kind::scalar;
  backend_memory* memory = nullptr;    // kind::memory
  std::array<std::byte, 16> scalar{};  // kind::scalar: the value's bytes
  std::size_t size = 0;                // scalar: sizeof; local: bytes of local memory
  /// OpenCL C name of the element or scalar type, as launch_argument has it: what a backend
  /// that checks arguments elsewhere (a device of another node) checks them by.
  const char* type_name = "";
};

/// `count` value-initialised T, kept on the stack up to `N` and on the heap beyond: a launch's
/// argument lists are short but unbounded, and a launch should not allocate for them.
template <class T, std::size_t N = 16>
class launch_list {
 public:
  explicit launch_list(std::size_t count) : count_(count) {
    if (count > N) heap_.resize(count);
  }
  launch_list(const launch_list&) = delete;
  launch_list& operator=(const launch_list&) = delete;

  T* data() noexcept { return count_ > N ? heap_.data() : stack_.data(); }
  T& operator[](std::size_t index) noexcept { return data()[index]; }
  std::span<T> span() noexcept { return {data(), count_}; }

 private:
  std::size_t count_;
  std::array<T, N> stack_{};
  std::vector<T> heap_;
};

/// A kernel of a built program. launch() on different queues may run concurrently with the same
/// backend_kernel, so it keeps no per-launch state unguarded.
class backend_kernel {
 public:
  virtual ~backend_kernel() = default;
  std::string name;
  /// The formal parameters; empty with params_known == false when the driver cannot tell.
  std::vector<kernel_param> params;
  bool params_known = true;
};

/// A built program.
class backend_program {
 public:
  virtual ~backend_program() = default;

  /// An opaque blob that backend_device::load turns back into this program: what the disk
  /// cache stores.
  virtual std::vector<std::byte> binary() const = 0;

  /// The compiler's log (may be empty; warnings of a successful build live here).
  virtual std::string build_log() const = 0;

  /// Whether the program came from a disk cache: the default, never, is for programs built
  /// here (device_state knows where it loaded them from); a program built by another node
  /// says what that node did.
  virtual bool from_cache() const noexcept { return false; }

  /// The kernel called `name`; throws troupe::error(errc::invalid_argument) naming the kernels
  /// the program has when there is none.
  virtual std::unique_ptr<backend_kernel> kernel(const std::string& name) = 0;
};

/// Whether a launch gets an event of its own. An event per command costs the driver as much as
/// the launch itself (NVIDIA's OpenCL on an H200: 4.5-6.5 us per empty kernel without, 6-10 us
/// with), so a launch nobody waits for yet goes without; a later event on the same in-order
/// queue, or mark(), tells when it has ended. `held`: none, and the backend need not hand the
/// launch to the device yet (OpenCL: no flush), since more commands follow at once; the last
/// of them is flushed, or flush() is called.
enum class launch_event : std::uint8_t { own, none, held };

/// An in-order queue (an OpenCL command queue or a CUDA stream). Every call enqueues one command
/// to start after the events in `wait` (all of this device's domain) and returns the event that
/// marks its end (launch: null with launch_event::none). A call that fails throws and enqueues
/// nothing.
class backend_queue {
 public:
  virtual ~backend_queue() = default;

  /// `pinned`: `src`/`dst` is page-locked memory from allocate_host, so the copy may be truly
  /// asynchronous. Otherwise the backend stages through pinned memory of its own or lets the
  /// driver do so, but never blocks the calling thread until the device is done.
  virtual event_ptr write(backend_memory& dst, std::size_t offset, const void* src,
                          std::size_t bytes, bool pinned, wait_list wait) = 0;
  /// `ready` (may be null): how far `dst` may be written yet. Only a read that goes through a
  /// staging block (stages_reads_of) gets one; its copy out of the block follows the gate.
  virtual event_ptr read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes,
                         bool pinned, intrusive_ptr<destination_gate> ready, wait_list wait) = 0;
  /// Whether a read of `bytes` into pageable memory goes through a staging block of the
  /// backend's, rather than straight into its destination.
  virtual bool stages_reads_of(std::size_t bytes) const noexcept = 0;
  /// Repeats the `pattern_size` bytes at `pattern` (1, 2, 4, 8 or 16 bytes) over `bytes` bytes.
  virtual event_ptr fill(backend_memory& dst, std::size_t offset, std::size_t bytes,
                         const void* pattern, std::size_t pattern_size, wait_list wait) = 0;
  /// Copies within one device.
  virtual event_ptr copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                         std::size_t dst_offset, std::size_t bytes, wait_list wait) = 0;
  virtual event_ptr launch(backend_kernel& kernel, const launch_shape& shape,
                           std::span<const kernel_argument> args, wait_list wait,
                           launch_event marking) = 0;
  /// An event that ends once every command enqueued before it has ended, and enqueues nothing
  /// else (an OpenCL marker; a CUDA event recorded on the stream).
  virtual event_ptr mark() = 0;
  /// Hands the launches enqueued with launch_event::held to the device.
  virtual void flush() = 0;
  /// Whether the driver charges for calls beside the thread that launches (NVIDIA's OpenCL:
  /// several µs for a launch from another thread than the queue's last one; 10 to 25 µs for an
  /// event released on another thread while it launches). Then the completion thread issues
  /// every launch that nobody waits for, not only those that come while it is awake for the
  /// queue (queue_state::hand_on), and drops the events that commands' futures leave behind
  /// (retirement).
  virtual bool prefers_one_launching_thread() const noexcept { return false; }
  /// Whether the wait list of a command also holds the events of the commands earlier on this
  /// queue that it depends on. A queue whose commands are checked elsewhere (on another node)
  /// learns only there that one failed to issue, and must fail those that depend on it there.
  virtual bool wants_same_queue_waits() const noexcept { return false; }
  /// Whether the driver may return from enqueuing a command of kind `what` only once the device
  /// has run it and what came before it on the queue: NVIDIA's OpenCL returns from a read,
  /// non-blocking or not, staged or not, once the kernel before it and the copy are done. Such
  /// commands are issued by their device's copy thread (copy_issuer), never by a scheduler
  /// worker, and never by the completion thread, which must go on polling.
  virtual bool may_block_in(command::kind /*what*/) const noexcept { return false; }
};

/// For a read given a destination_gate that would not be staged: written straight into, its
/// destination would then be zeroed by its preparation. The frontend asks stages_reads_of first,
/// so this marks a backend whose two answers disagree.
[[noreturn]] inline void refuse_unstaged_gate(const std::string& device_name, std::size_t bytes) {
  throw error(errc::device_error, "read of " + std::to_string(bytes) + " bytes on device '" +
                                      device_name +
                                      "': given a destination still being prepared, but not "
                                      "staged (stages_reads_of disagrees with read)");
}

/// How much freed device memory a device keeps for reuse: a sixteenth of the device, at most
/// 1 GiB; enough for the temporaries of repeated requests, little enough that others may
/// allocate the rest.
inline std::size_t kept_memory_limit(std::uint64_t global_memory) noexcept {
  return static_cast<std::size_t>(std::min<std::uint64_t>(global_memory / 16, 1u << 30));
}

/// One device of a backend.
class backend_device {
 public:
  virtual ~backend_device() = default;

  device_info info;

  /// Throws troupe::error(errc::out_of_device_memory) naming the size and the device.
  virtual std::unique_ptr<backend_memory> allocate(std::size_t bytes) = 0;
  virtual std::unique_ptr<backend_host_memory> allocate_host(std::size_t bytes) = 0;
  virtual std::unique_ptr<backend_queue> make_queue() = 0;

  /// Compiles; blocking CPU work, run off the scheduler's workers. Throws troupe::error
  /// (errc::compile_error) whose message holds the full build log.
  virtual std::unique_ptr<backend_program> build(const std::string& source,
                                                 const std::string& options) = 0;
  /// For a device whose compiler runs elsewhere (a device of another node): starts the build
  /// and returns its future, which device::compile awaits instead of calling build() on the
  /// compiler thread; that thread must not wait for another node's compiler, which may be
  /// waiting for this one's. Null for a device that builds here.
  virtual std::optional<future<std::unique_ptr<backend_program>>> build_elsewhere(
      const std::string& /*source*/, const std::string& /*options*/) {
    return std::nullopt;
  }
  /// Rebuilds a program from backend_program::binary().
  virtual std::unique_ptr<backend_program> load(std::span<const std::byte> binary) = 0;

  /// What identifies compiled code for this device in the disk cache: the device, its
  /// architecture, the driver and the compiler version.
  virtual std::string cache_identity() const = 0;
  /// Whether programs for this device go to this process's disk cache: not those of a device
  /// of another node, which caches them where it compiles them.
  virtual bool caches_on_disk() const noexcept { return true; }

  /// Events of this device's queues; see backend_event::domain.
  virtual const void* domain() const noexcept = 0;

  /// The driver calls that waited for this device on a scheduler worker: none, which tests check.
  virtual const device_waits& waits() const noexcept = 0;

  /// Whether copy_peer to `other` works (CUDA peer access between two GPUs).
  virtual bool can_copy_peer(const backend_device& /*other*/) const { return false; }
  /// Copies from this device's `src` to `other`'s `dst` on `queue` (one of this device's).
  virtual event_ptr copy_peer(backend_queue& /*queue*/, backend_memory& /*src*/,
                              std::size_t /*src_offset*/, backend_device& /*other*/,
                              backend_memory& /*dst*/, std::size_t /*dst_offset*/,
                              std::size_t /*bytes*/, wait_list /*wait*/) {
    throw error(errc::invalid_argument, "copy_peer: not supported between these devices");
  }
};

/// What a backend found: its devices, or why it has none.
struct backend_discovery {
  std::vector<std::unique_ptr<backend_device>> devices;
  /// Empty when the backend works; otherwise why it offers no devices ("libcuda.so.1 not found").
  std::string unavailable_reason;
};

backend_discovery discover_opencl();
backend_discovery discover_cuda();

}  // namespace troupe::detail
