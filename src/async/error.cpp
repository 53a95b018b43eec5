#include "troupe/async/error.hpp"

namespace troupe {

std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::none:
      return "none";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::broken_promise:
      return "broken_promise";
    case errc::promise_already_satisfied:
      return "promise_already_satisfied";
    case errc::no_state:
      return "no_state";
    case errc::unexpected_message:
      return "unexpected_message";
    case errc::unexpected_response:
      return "unexpected_response";
    case errc::request_timeout:
      return "request_timeout";
    case errc::request_receiver_down:
      return "request_receiver_down";
    case errc::unhandled_exception:
      return "unhandled_exception";
    case errc::unreachable:
      return "unreachable";
    case errc::user_shutdown:
      return "user_shutdown";
    case errc::kill:
      return "kill";
    case errc::system_gone:
      return "system_gone";
    case errc::runtime_error:
      return "runtime_error";
    case errc::out_of_range:
      return "out_of_range";
    case errc::out_of_device_memory:
      return "out_of_device_memory";
    case errc::compile_error:
      return "compile_error";
    case errc::device_error:
      return "device_error";
    case errc::limit_reached:
      return "limit_reached";
  }
  return "unknown";
}

}  // namespace troupe
