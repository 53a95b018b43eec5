#pragma once

#include <cstddef>
#include <memory>

#include "troupe/device/detail/device_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class backend_host_memory;

/// Page-locked host memory.
class host_memory_state final : public ref_counted {
 public:
  host_memory_state(intrusive_ptr<device_state> device, std::unique_ptr<backend_host_memory> memory,
                    std::size_t bytes);
  ~host_memory_state() override;

  void* data() noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  intrusive_ptr<device_state> device_;
  std::unique_ptr<backend_host_memory> memory_;
  void* data_ = nullptr;
  std::size_t bytes_;
};

/// Allocates `bytes` of page-locked host memory; throws troupe::error naming the caller.
intrusive_ptr<host_memory_state> allocate_host_memory(device_state& device, std::size_t bytes,
                                                      const char* caller);

}  // namespace troupe::detail
