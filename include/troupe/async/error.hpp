#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace troupe {

/// What went wrong, as a number a program can branch on. `error::what()` says the rest.
enum class errc : std::uint8_t {
  none = 0,          ///< no error; also the exit reason of an actor that quit normally
  invalid_argument,  ///< a call got an argument it cannot use
  broken_promise,    ///< a promise was destroyed before it was satisfied
  promise_already_satisfied,
  no_state,               ///< a future or promise was used after it was moved from or consumed
  unexpected_message,     ///< no handler of the receiver matches the message
  unexpected_response,    ///< a response does not have the type the requester expected
  request_timeout,        ///< no response arrived before the request's deadline
  request_receiver_down,  ///< the receiver of a request was dead or died before responding
  unhandled_exception,    ///< a handler threw; the actor ended
  unreachable,            ///< an actor ended because no handle referred to it any more
  user_shutdown,          ///< the actor system shut down while the actor was still alive
  kill,                   ///< an actor was killed explicitly
  system_gone,            ///< the actor system or device that owns a resource no longer exists
  runtime_error,          ///< user code failed with a std::exception; the message is its what()
  out_of_range,           ///< an offset or size lies outside the object it refers to
  out_of_device_memory,   ///< a device could not allocate the memory an operation needs
  compile_error,          ///< a device program did not compile; the message holds the build log
  device_error,           ///< a device, its driver or a command on it failed
  limit_reached,          ///< a configured limit was reached; the message names its option
};

/// The name of an error code, for messages and logs.
std::string_view to_string(errc code) noexcept;

/// An error value: a code plus a message that says what was expected, what was found and where.
/// It is also the exception that failed futures throw from `get()`.
class error : public std::runtime_error {
 public:
  /// The "no error" value.
  error() : std::runtime_error(""), code_(errc::none) {}
  error(errc code, const std::string& message) : std::runtime_error(message), code_(code) {}

  errc code() const noexcept { return code_; }

  /// True if this holds an error (as opposed to `errc::none`).
  explicit operator bool() const noexcept { return code_ != errc::none; }

  friend bool operator==(const error& a, errc b) noexcept { return a.code_ == b; }

 private:
  errc code_;
};

}  // namespace troupe
