#include "troupe/device/program.hpp"

#include <string>

#include "device/backend.hpp"
#include "troupe/device/device.hpp"

namespace troupe {

std::string program::build_log() const {
  return state_ ? state_->backend().build_log() : "";
}

troupe::device program::device() const {
  return troupe::device{state_ ? detail::intrusive_ptr<detail::device_state>{&state_->device()}
                               : nullptr};
}

}  // namespace troupe
