#pragma once

// What the CUDA backend's objects share: the driver of one discovery, and a device's primary
// context with the checks that turn failed driver calls into troupe::error.

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "device/cuda/cuda_driver.hpp"
#include "device/device_waits.hpp"

namespace troupe::detail {

/// "CUDA_ERROR_INVALID_VALUE: invalid argument".
std::string describe(const cuda_driver& driver, CUresult result);

/// Throws troupe::error for a failed driver call: errc::out_of_device_memory for
/// CUDA_ERROR_OUT_OF_MEMORY, errc::device_error otherwise. The message reads "CUDA <call> on
/// device '<name>': <error name>: <error text><detail>".
[[noreturn]] void throw_cuda_error(const cuda_driver& driver, CUresult result,
                                   std::string_view call, std::string_view device_name,
                                   std::string_view detail = {});

class cuda_context;

/// What one discover_cuda() call shares between its devices: the driver, NVRTC (loaded on first
/// use) and which pairs of devices have peer access. Its address is the event domain, since
/// CUDA streams may wait for events of any context.
class cuda_platform {
 public:
  cuda_platform(const cuda_driver& functions, int version_number)
      : driver(functions), driver_version(version_number) {}

  const cuda_driver driver;
  /// As cuDriverGetVersion reports it: 13000 for CUDA 13.0.
  const int driver_version;

  /// NVRTC, or why it is missing; loaded on the first call.
  const loaded<nvrtc_library>& nvrtc() const;

  /// Lets each of the two contexts access the other's memory where the hardware allows, once
  /// per pair. Makes `first` current on return.
  void enable_peer_access(const cuda_context& first, const cuda_context& second);

 private:
  mutable std::once_flag nvrtc_once_;
  mutable loaded<nvrtc_library> nvrtc_;
  std::mutex peer_mutex_;
  std::set<std::pair<CUdevice, CUdevice>> peer_pairs_;
};

/// The limits a launch is checked against.
struct cuda_limits {
  unsigned max_threads_per_block = 0;
  std::array<unsigned, 3> max_block{};
  std::array<unsigned, 3> max_grid{};
  /// Dynamic shared memory a kernel may use after opting in.
  std::size_t max_shared_bytes = 0;
};

/// One device's primary context, retained for as long as anything of the device lives: memory,
/// queues, programs and events hold it through a shared_ptr, so they may go in any order.
class cuda_context {
 public:
  /// Retains the primary context; throws troupe::error.
  cuda_context(std::shared_ptr<cuda_platform> owner, CUdevice ordinal, std::string device_name);
  ~cuda_context();
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;

  const cuda_driver& driver() const noexcept { return platform->driver; }

  /// Makes the context current on the calling thread: backend methods run on any thread.
  void make_current() const;
  /// For destructors, which must not throw.
  void make_current_quietly() const noexcept { driver().cuCtxSetCurrent(handle); }

  void check(CUresult result, std::string_view call) const {
    if (result != CUDA_SUCCESS) fail(result, call);
  }
  [[noreturn]] void fail(CUresult result, std::string_view call,
                         std::string_view detail = {}) const;

  const std::shared_ptr<cuda_platform> platform;
  const CUdevice device;
  const std::string name;
  /// The calls that waited for the device on a scheduler worker: none (device_waits).
  mutable device_waits waits;
  CUcontext handle = nullptr;
};

}  // namespace troupe::detail
