#include "troupe/device/device_info.hpp"

#include <string>
#include <string_view>

namespace troupe {

std::string_view to_string(backend b) noexcept {
  return b == backend::cuda ? "cuda" : "opencl";
}

std::string_view to_string(device_type t) noexcept {
  switch (t) {
    case device_type::gpu:
      return "gpu";
    case device_type::cpu:
      return "cpu";
    case device_type::accelerator:
      return "accelerator";
    case device_type::other:
      break;
  }
  return "other";
}

std::string to_string(version v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

}  // namespace troupe
