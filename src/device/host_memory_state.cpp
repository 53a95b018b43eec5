#include "troupe/device/detail/host_memory_state.hpp"

#include "device/backend.hpp"

namespace troupe::detail {

host_memory_state::host_memory_state(intrusive_ptr<device_state> device,
                                     std::unique_ptr<backend_host_memory> memory, std::size_t bytes)
    : device_(std::move(device)), memory_(std::move(memory)), bytes_(bytes) {
  if (memory_) data_ = memory_->data;
}

host_memory_state::~host_memory_state() = default;

intrusive_ptr<host_memory_state> allocate_host_memory(device_state& device, std::size_t bytes,
                                                      const char* caller) {
  device.check_open(caller);
  std::unique_ptr<backend_host_memory> memory;
  if (bytes != 0) memory = device.backend().allocate_host(bytes);
  return intrusive_ptr<host_memory_state>{
      new host_memory_state(intrusive_ptr<device_state>{&device}, std::move(memory), bytes),
      adopt_ref};
}

}  // namespace troupe::detail
