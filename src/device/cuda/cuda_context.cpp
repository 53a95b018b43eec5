#include "device/cuda/cuda_context.hpp"

#include <algorithm>

#include "troupe/async/error.hpp"

namespace troupe::detail {

std::string describe(const cuda_driver& driver, CUresult result) {
  const char* name = nullptr;
  if (driver.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) {
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
  std::string described = name;
  const char* text = nullptr;
  if (driver.cuGetErrorString(result, &text) == CUDA_SUCCESS && text) {
    described += ": ";
    described += text;
  }
  return described;
}

void throw_cuda_error(const cuda_driver& driver, CUresult result, std::string_view call,
                      std::string_view device_name, std::string_view detail) {
  std::string message = "CUDA ";
  message += call;
  message += " on device '";
  message += device_name;
  message += "': ";
  message += describe(driver, result);
  message += detail;
  throw error(result == CUDA_ERROR_OUT_OF_MEMORY ? errc::out_of_device_memory : errc::device_error,
              message);
}

const loaded<nvrtc_library>& cuda_platform::nvrtc() const {
  std::call_once(nvrtc_once_, [this] { nvrtc_ = load_nvrtc(); });
  return nvrtc_;
}

void cuda_platform::enable_peer_access(const cuda_context& first, const cuda_context& second) {
  const std::pair pair{std::min(first.device, second.device),
                       std::max(first.device, second.device)};
  std::lock_guard lock(peer_mutex_);
  if (!peer_pairs_.contains(pair)) {
    for (auto [from, to] : {std::pair{&first, &second}, std::pair{&second, &first}}) {
      int can_access = 0;
      from->check(driver.cuDeviceCanAccessPeer(&can_access, from->device, to->device),
                  "cuDeviceCanAccessPeer");
      // Without peer access cuMemcpyPeerAsync still works; the driver stages through the host.
      if (!can_access) continue;
      from->make_current();
      const CUresult result = driver.cuCtxEnablePeerAccess(to->handle, 0);
      if (result != CUDA_SUCCESS && result != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        from->fail(result, "cuCtxEnablePeerAccess");
      }
    }
    peer_pairs_.insert(pair);
  }
  first.make_current();
}

cuda_context::cuda_context(std::shared_ptr<cuda_platform> owner, CUdevice ordinal,
                           std::string device_name)
    : platform(std::move(owner)), device(ordinal), name(std::move(device_name)) {
  check(driver().cuDevicePrimaryCtxRetain(&handle, device), "cuDevicePrimaryCtxRetain");
}

cuda_context::~cuda_context() {
  driver().cuDevicePrimaryCtxRelease(device);
}

void cuda_context::make_current() const {
  check(driver().cuCtxSetCurrent(handle), "cuCtxSetCurrent");
}

void cuda_context::fail(CUresult result, std::string_view call, std::string_view detail) const {
  throw_cuda_error(driver(), result, call, name, detail);
}

}  // namespace troupe::detail
