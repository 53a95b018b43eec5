#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "troupe/device/detail/device_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class backend_kernel;
class backend_program;

/// A built program and its kernels, created on first use and shared by all launches.
class program_state final : public ref_counted {
 public:
  program_state(intrusive_ptr<device_state> device, std::unique_ptr<backend_program> backend,
                bool from_cache);
  ~program_state() override;

  device_state& device() noexcept { return *device_; }
  backend_program& backend() noexcept { return *backend_; }
  bool from_cache() const noexcept { return from_cache_; }

  /// The kernel called `name`; throws troupe::error(errc::invalid_argument) if there is none.
  backend_kernel& kernel(const std::string& name);

 private:
  intrusive_ptr<device_state> device_;
  std::unique_ptr<backend_program> backend_;
  bool from_cache_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<backend_kernel>, std::less<>> kernels_;
};

}  // namespace troupe::detail
