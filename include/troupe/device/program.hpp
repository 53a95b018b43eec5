#pragma once

#include <string>

#include "troupe/device/detail/program_state.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {

class device;

/// A compiled device program (OpenCL C or CUDA C++), made by `device::compile`. Launch its
/// kernels by name. Cheap to copy; the program lives while a handle or a running launch does.
class program {
 public:
  // -- constructors ---------------------------------------------------------

  program() = default;
  explicit program(detail::intrusive_ptr<detail::program_state> state) : state_(std::move(state)) {}

  // -- properties -----------------------------------------------------------

  bool valid() const noexcept { return static_cast<bool>(state_); }

  /// The compiler's messages (warnings); empty when it had none.
  std::string build_log() const;

  /// True when the binary came from the disk cache instead of the compiler.
  bool from_cache() const noexcept { return state_ && state_->from_cache(); }

  /// The device the program was built for.
  troupe::device device() const;

  const detail::intrusive_ptr<detail::program_state>& state() const noexcept { return state_; }

 private:
  detail::intrusive_ptr<detail::program_state> state_;
};

}  // namespace troupe
