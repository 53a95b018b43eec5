// The CUDA backend: discover_cuda() and the devices it finds.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "device/cuda/cuda_compile.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/cuda_event.hpp"
#include "device/cuda/cuda_memory.hpp"
#include "device/cuda/cuda_pinned_allocator.hpp"
#include "device/cuda/cuda_program.hpp"
#include "device/cuda/cuda_queue.hpp"

namespace troupe::detail {
namespace {

std::string version_string(int driver_version) {
  return std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10);
}

class cuda_device final : public backend_device {
 public:
  cuda_device(std::shared_ptr<cuda_context> context, device_info description,
              const cuda_limits& limits)
      : context_(std::move(context)),
        events_(std::make_shared<event_pool>(context_)),
        staging_(std::make_shared<cuda_staging>(context_)),
        limits_(limits) {
    info = std::move(description);
    memory_ =
        std::make_shared<device_memory_cache>(context_, kept_memory_limit(info.global_memory));
  }

  std::unique_ptr<backend_memory> allocate(std::size_t bytes) override {
    return std::make_unique<cuda_memory>(memory_, bytes);
  }

  std::unique_ptr<backend_host_memory> allocate_host(std::size_t bytes) override {
    return std::make_unique<cuda_host_memory>(context_, bytes);
  }

  std::unique_ptr<backend_queue> make_queue() override {
    return std::make_unique<cuda_queue>(context_, events_, staging_, limits_);
  }

  std::unique_ptr<backend_program> build(const std::string& source,
                                         const std::string& options) override {
    const nvrtc_library& nvrtc = this->nvrtc();
    cuda_compilation compiled =
        compile_cuda(nvrtc, source, options, info.compute_capability, info.name);
    return std::make_unique<cuda_program>(context_, std::move(compiled.image),
                                          std::move(compiled.log));
  }

  std::unique_ptr<backend_program> load(std::span<const std::byte> binary) override {
    return std::make_unique<cuda_program>(context_, decode_image(binary, info.name), "");
  }

  std::string cache_identity() const override {
    const loaded<nvrtc_library>& nvrtc = context_->platform->nvrtc();
    const version capability = info.compute_capability;
    return "cuda|" + info.name + "|sm_" + std::to_string(capability.major) +
           std::to_string(capability.minor) + "|driver " +
           version_string(context_->platform->driver_version) + "|nvrtc " +
           (nvrtc.error.empty() ? nvrtc_version(nvrtc.functions) : std::string("unavailable"));
  }

  const void* domain() const noexcept override { return context_->platform.get(); }
  const device_waits& waits() const noexcept override { return context_->waits; }

  bool can_copy_peer(const backend_device& other) const override {
    const cuda_device* peer = same_discovery(other);
    if (!peer || peer == this) return false;
    const cuda_driver& driver = context_->driver();
    int forward = 0;
    int backward = 0;
    return driver.cuDeviceCanAccessPeer(&forward, context_->device, peer->context_->device) ==
               CUDA_SUCCESS &&
           driver.cuDeviceCanAccessPeer(&backward, peer->context_->device, context_->device) ==
               CUDA_SUCCESS &&
           forward && backward;
  }

  event_ptr copy_peer(backend_queue& queue, backend_memory& src, std::size_t src_offset,
                      backend_device& other, backend_memory& dst, std::size_t dst_offset,
                      std::size_t bytes, wait_list wait) override {
    const cuda_device* peer = same_discovery(other);
    if (!peer) {
      const std::string message = "copy_peer: device '" + other.info.name +
                                  "' is no CUDA device found together with '" + info.name + "'";
      throw error(errc::invalid_argument, message);
    }
    context_->platform->enable_peer_access(*context_, *peer->context_);
    const CUdeviceptr from = device_address(src) + src_offset;
    const CUdeviceptr to = device_address(dst) + dst_offset;
    const CUcontext source_context = context_->handle;
    const CUcontext target_context = peer->context_->handle;
    return static_cast<cuda_queue&>(queue).enqueue(wait, {}, [&](CUstream stream) {
      if (bytes == 0) return;
      context_->check(context_->driver().cuMemcpyPeerAsync(to, target_context, from, source_context,
                                                           bytes, stream),
                      "cuMemcpyPeerAsync");
    });
  }

 private:
  const nvrtc_library& nvrtc() const {
    const loaded<nvrtc_library>& nvrtc = context_->platform->nvrtc();
    if (!nvrtc.error.empty()) {
      throw error(errc::device_error,
                  "cannot compile CUDA programs for device '" + info.name + "': " + nvrtc.error);
    }
    return nvrtc.functions;
  }

  /// `other` as a device of this discovery, or null.
  const cuda_device* same_discovery(const backend_device& other) const {
    const auto* peer = dynamic_cast<const cuda_device*>(&other);
    return peer && peer->context_->platform == context_->platform ? peer : nullptr;
  }

  std::shared_ptr<cuda_context> context_;
  std::shared_ptr<event_pool> events_;
  std::shared_ptr<cuda_staging> staging_;
  std::shared_ptr<device_memory_cache> memory_;
  cuda_limits limits_;
};

std::unique_ptr<backend_device> make_device(const std::shared_ptr<cuda_platform>& platform,
                                            int ordinal) {
  const cuda_driver& driver = platform->driver;
  std::string name{"#"};  // built by appending: GCC 12 misreports "#" + to_string as overlap
  name += std::to_string(ordinal);
  auto check = [&](CUresult result, std::string_view call) {
    if (result != CUDA_SUCCESS) throw_cuda_error(driver, result, call, name);
  };
  CUdevice device = 0;
  check(driver.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  std::array<char, 256> buffer{};
  check(driver.cuDeviceGetName(buffer.data(), static_cast<int>(buffer.size()), device),
        "cuDeviceGetName");
  name = buffer.data();
  auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    check(driver.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
    return value;
  };
  auto count = [&](CUdevice_attribute which) { return static_cast<unsigned>(attribute(which)); };
  std::size_t memory = 0;
  check(driver.cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem");

  device_info info;
  info.name = name;
  info.vendor = "NVIDIA Corporation";
  info.driver = "CUDA " + version_string(platform->driver_version);
  info.backend = backend::cuda;
  info.type = device_type::gpu;
  info.global_memory = memory;
  info.compute_units = count(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.max_work_group_size = count(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.compute_capability = {attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                             attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)};

  cuda_limits limits;
  limits.max_threads_per_block = count(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  limits.max_block = {count(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                      count(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                      count(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
  limits.max_grid = {count(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                     count(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                     count(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
  limits.max_shared_bytes = count(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);

  auto context = std::make_shared<cuda_context>(platform, device, std::move(name));
  return std::make_unique<cuda_device>(std::move(context), std::move(info), limits);
}

}  // namespace

backend_discovery discover_cuda() {
  backend_discovery found;
  loaded<cuda_driver> driver = load_cuda_driver();
  if (!driver.error.empty()) {
    found.unavailable_reason = std::move(driver.error);
    return found;
  }
  const cuda_driver& functions = driver.functions;
  if (const CUresult result = functions.cuInit(0); result != CUDA_SUCCESS) {
    found.unavailable_reason =
        (result == CUDA_ERROR_NO_DEVICE ? "no CUDA devices (cuInit: "
                                        : "CUDA driver did not initialise (cuInit: ") +
        describe(functions, result) + ")";
    return found;
  }
  int version = 0;
  int count = 0;
  if (const CUresult result = functions.cuDriverGetVersion(&version); result != CUDA_SUCCESS) {
    found.unavailable_reason = "cuDriverGetVersion: " + describe(functions, result);
    return found;
  }
  if (const CUresult result = functions.cuDeviceGetCount(&count); result != CUDA_SUCCESS) {
    found.unavailable_reason = "cuDeviceGetCount: " + describe(functions, result);
    return found;
  }
  if (count == 0) {
    found.unavailable_reason = "no CUDA devices";
    return found;
  }

  auto platform = std::make_shared<cuda_platform>(functions, version);
  std::string failures;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    // One device that fails (say, held by another process in exclusive mode) hides only itself.
    try {
      found.devices.push_back(make_device(platform, ordinal));
    } catch (const error& failure) {
      if (!failures.empty()) failures += "; ";
      failures += failure.what();
    }
  }
  if (found.devices.empty()) found.unavailable_reason = failures;
  return found;
}

}  // namespace troupe::detail
