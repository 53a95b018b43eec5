#pragma once

#include <cstddef>
#include <memory>

#include "troupe/device/detail/device_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class backend_memory;

/// Memory of one buffer.
class buffer_state final : public ref_counted {
 public:
  buffer_state(intrusive_ptr<device_state> device, std::unique_ptr<backend_memory> memory,
               std::size_t bytes);
  ~buffer_state() override;

  device_state& device() noexcept { return *device_; }
  const intrusive_ptr<device_state>& device_handle() const noexcept { return device_; }
  backend_memory* memory() noexcept { return memory_.get(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  intrusive_ptr<device_state> device_;
  std::unique_ptr<backend_memory> memory_;  // null for an empty buffer
  std::size_t bytes_;
};

/// Allocates `bytes` of device memory; throws troupe::error (errc::out_of_device_memory,
/// errc::system_gone) naming the caller.
intrusive_ptr<buffer_state> allocate_buffer(device_state& device, std::size_t bytes,
                                            const char* caller);

}  // namespace troupe::detail
