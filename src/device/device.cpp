#include "troupe/device/device.hpp"

#include <string>

#include "troupe/async/error.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/device/detail/queue_state.hpp"

namespace troupe {

detail::device_state& device::checked() const {
  if (!state_) throw error(errc::no_state, "device: the handle is empty");
  return *state_;
}

const device_info& device::info() const {
  return checked().info();
}

future<program> device::compile(const std::string& source, const std::string& options) const {
  if (!state_)
    return make_exceptional_future<program>(
        error(errc::no_state, "device::compile: the device handle is empty"));
  return state_->compile(source, options);
}

device_queue device::default_queue() const {
  return device_queue{detail::intrusive_ptr<detail::queue_state>{&checked().default_queue()},
                      state_};
}

device_queue device::make_queue() const {
  return device_queue{checked().make_queue()};
}

}  // namespace troupe
