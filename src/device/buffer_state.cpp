#include "troupe/device/detail/buffer_state.hpp"

#include "device/backend.hpp"

namespace troupe::detail {

buffer_state::buffer_state(intrusive_ptr<device_state> device,
                           std::unique_ptr<backend_memory> memory, std::size_t bytes)
    : device_(std::move(device)), memory_(std::move(memory)), bytes_(bytes) {}

buffer_state::~buffer_state() = default;

intrusive_ptr<buffer_state> allocate_buffer(device_state& device, std::size_t bytes,
                                            const char* caller) {
  device.check_open(caller);
  std::unique_ptr<backend_memory> memory;
  if (bytes != 0) memory = device.backend().allocate(bytes);
  return intrusive_ptr<buffer_state>{
      new buffer_state(intrusive_ptr<device_state>{&device}, std::move(memory), bytes), adopt_ref};
}

}  // namespace troupe::detail
