#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "troupe/async/shared_state.hpp"
#include "troupe/device/detail/fresh_memory.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class buffer_state;
class program_state;

/// What a command waits for: the states of the futures passed to `after(...)`, and those it
/// waits for only to keep an order, whose errors it does not take. Both kinds share one vector,
/// so that a kernel actor's request (one of each) allocates once.
struct dependency_list {
  struct entry {
    intrusive_ptr<state_base> state;
    bool order_only = false;
  };
  std::vector<entry> entries;
  bool has_invalid = false;  // after() got a future without a state

  void add(intrusive_ptr<state_base> state, bool order_only) {
    if (entries.empty()) entries.reserve(4);  // one allocation for the usual few
    entries.push_back({std::move(state), order_only});
  }
};

/// A launch's index space, normalised: global = grid × block for CUDA-style launches.
struct launch_shape {
  unsigned dimensions = 1;
  std::array<std::size_t, 3> global{1, 1, 1};
  std::array<std::size_t, 3> local{0, 0, 0};  // all zero: the backend picks
  std::array<std::size_t, 3> offset{0, 0, 0};
  std::size_t shared_bytes = 0;  // CUDA dynamic shared memory
};

/// One actual argument of a launch, as the public API packs it.
struct launch_argument {
  enum class kind : std::uint8_t { buffer, scalar, local };
  kind what = kind::scalar;
  intrusive_ptr<buffer_state> buffer;  // kind::buffer; kept alive until the launch completes
  std::array<std::byte, 16> scalar{};  // kind::scalar: the value's bytes
  std::size_t size = 0;                // scalar: sizeof; local: bytes; buffer: element size
  /// OpenCL C name of the element or scalar type ("float", "uint"); empty for other types.
  const char* type_name = "";
};

/// How much of a read's host destination may be written yet, counted in bytes from its start.
/// A large vector is prepared (faulted in, then zeroed by its own resize, which only one thread
/// can do) while the device copies into a staging block; the copy out of the block follows the
/// preparation piece by piece instead of waiting for all of it.
class destination_gate final : public ref_counted {
 public:
  /// The step in which the preparation opens the destination.
  static constexpr std::size_t piece = std::size_t{8} << 20;

  std::size_t ready() const noexcept { return ready_.load(std::memory_order_acquire); }
  /// Blocks until at least `bytes` are ready. The preparing thread never waits for the device,
  /// so this ends within its preparation's time.
  void wait_until_ready(std::size_t bytes) const noexcept {
    for (std::size_t now = ready(); now < bytes; now = ready())
      ready_.wait(now, std::memory_order_acquire);
  }
  /// The first `bytes` are ready.
  void open_up_to(std::size_t bytes) noexcept {
    ready_.store(bytes, std::memory_order_release);
    ready_.notify_all();
  }

 private:
  std::atomic<std::size_t> ready_{0};
};

/// One device command as the public API describes it; the frontend checks and issues it.
struct command {
  enum class kind : std::uint8_t { write, read, fill, copy, launch };
  kind what = kind::write;
  /// For messages: the public call ("buffer<float>::read"); empty for a launch, which who()
  /// describes, so that a launch does not build a string it needs only for an error.
  std::string caller;

  // write, read, fill: `buffer`; copy: from `buffer` to `target`. Offsets and sizes in bytes.
  intrusive_ptr<buffer_state> buffer;
  intrusive_ptr<buffer_state> target;
  std::size_t offset = 0;
  std::size_t target_offset = 0;
  std::size_t bytes = 0;
  const void* host_source = nullptr;  // write
  void* host_destination = nullptr;   // read
  /// read: how far host_destination may be written yet; null when all of it may.
  intrusive_ptr<destination_gate> destination_ready;
  bool pinned = false;  // the host memory is page-locked (a host_buffer)
  std::array<std::byte, 16> pattern{};
  std::size_t pattern_size = 0;
  /// Host memory that must live until the command completes (a host_buffer, a moved vector).
  intrusive_ptr<ref_counted> keep_alive;

  // launch
  intrusive_ptr<program_state> program;
  std::string kernel;
  launch_shape shape;
  std::vector<launch_argument> arguments;

  /// For messages: what the command is ("buffer<float>::read", "launch of kernel 'k'").
  std::string who() const {
    return what == kind::launch ? "launch of kernel '" + kernel + "'" : caller;
  }
};

/// Receives the end of a command: satisfies the future the caller holds.
class command_result : public ref_counted {
 public:
  /// The command finished.
  virtual void complete() noexcept = 0;
  /// The command failed, or could not be issued.
  virtual void fail(std::exception_ptr error) noexcept = 0;
  /// The future's state; the frontend sets its origin to the command's event.
  virtual state_base& state() noexcept = 0;
};

/// A command_result for a future<void>.
class void_result final : public command_result {
 public:
  explicit void_result(intrusive_ptr<executor> ex)
      : state_(new shared_state<void>(std::move(ex)), adopt_ref) {}
  void complete() noexcept override { state_->try_set_value(); }
  void fail(std::exception_ptr error) noexcept override { state_->try_set_error(std::move(error)); }
  state_base& state() noexcept override { return *state_; }
  const intrusive_ptr<shared_state<void>>& shared() const noexcept { return state_; }

 private:
  intrusive_ptr<shared_state<void>> state_;
};

/// Sizes from which host memory that a read fills is prepared by fresh_memory::prepare.
inline constexpr std::size_t fresh_memory_threshold = std::size_t{8} << 20;

/// Sizes from which a read's new vector smaller than fresh_memory_threshold is looked at with
/// is_mostly_fresh, and prepared by fresh_memory::prepare when it is fresh.
inline constexpr std::size_t fresh_check_threshold = std::size_t{1} << 20;

/// Whether most pages of [data, data + bytes) are not resident: never written since the
/// allocator took them from the kernel, or given back since. False where that cannot be told.
bool is_mostly_fresh(const void* data, std::size_t bytes) noexcept;

/// A command_result for a read into a vector it owns: future<std::vector<T>>.
template <class T>
class vector_result final : public command_result {
 public:
  /// `prepare_later`: the read copies through a staging block, so a large vector is only
  /// reserved here, and prepare() readies it while the device copies (see destination_gate).
  /// `fresh`: the system's threads that ready large vectors.
  vector_result(intrusive_ptr<executor> ex, std::size_t count, bool prepare_later,
                fresh_memory& fresh)
      : state_(new shared_state<std::vector<T>>(std::move(ex)), adopt_ref), count_(count) {
    const std::size_t bytes = count * sizeof(T);
    if (bytes < fresh_check_threshold) {
      data_.resize(count);
      return;
    }
    data_.reserve(count);
    const bool large = bytes >= fresh_memory_threshold;
    if (large && prepare_later) {
      gate_ = intrusive_ptr<destination_gate>{new destination_gate, adopt_ref};
      fresh_ = intrusive_ptr<fresh_memory>{&fresh};
      return;
    }
    // Large memory is fresh from the kernel. Smaller memory is at times too (a process's first
    // reads, or after the allocator gave pages back), and one thread faults it in page by page:
    // zeroing 7.9 MiB took 3.5 to 5.7 ms on an H100's host then, against about 0.5 ms in memory
    // written before.
    if (large || is_mostly_fresh(data_.data(), bytes)) fresh.prepare(data_.data(), bytes);
    data_.resize(count);
  }
  void complete() noexcept override { state_->try_set_value(std::move(data_)); }
  void fail(std::exception_ptr error) noexcept override { state_->try_set_error(std::move(error)); }
  state_base& state() noexcept override { return *state_; }
  const intrusive_ptr<shared_state<std::vector<T>>>& shared() const noexcept { return state_; }
  T* data() noexcept { return data_.data(); }
  /// How far data() may be written yet; null when all of it may.
  const intrusive_ptr<destination_gate>& gate() const noexcept { return gate_; }

  /// Readies a vector left for later, opening its gate piece by piece; nothing otherwise. Called
  /// once, by the thread that submitted the read, after submitting it.
  void prepare() noexcept {
    if (!gate_) return;
    // Faulted in by several threads first; then the vector's own zeroing runs at the speed of
    // memset, on one thread: the copy out of the staging block follows it.
    fresh_->prepare(data_.data(), count_ * sizeof(T));
    const std::size_t per_piece = std::max<std::size_t>(1, destination_gate::piece / sizeof(T));
    for (std::size_t ready = 0; ready < count_;) {
      ready = std::min(count_, ready + per_piece);
      data_.resize(ready);  // within the reserved capacity: never reallocates
      gate_->open_up_to(ready * sizeof(T));
    }
  }

 private:
  intrusive_ptr<shared_state<std::vector<T>>> state_;
  std::size_t count_;
  std::vector<T> data_;
  intrusive_ptr<destination_gate> gate_;
  intrusive_ptr<fresh_memory> fresh_;  // while a vector is left for prepare()
};

}  // namespace troupe::detail
