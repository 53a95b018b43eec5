#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "troupe/device/nd_range.hpp"

namespace troupe::kernel {

/// How a global-memory argument is received or sent on: `val` is a host `std::vector<T>`,
/// copied to the device (or back); `ref` is a `mem_ref<T>` that stays on the device.
struct val {};
struct ref {};

/// What a size rule sees for one request: its nd_range and, per position of the signature, the
/// element count of the global-memory input there (0 at other positions).
struct request_shape {
  nd_range range{{1}};
  std::vector<std::size_t> sizes;

  /// The number of work items: the product of the global sizes.
  std::size_t work_items() const noexcept {
    const auto& g = range.global();
    return g[0] * g[1] * g[2];
  }
};

/// How many elements an output, a scratch buffer or local memory has, decided per request: by
/// default the number of work items; else a constant, or a function of the request_shape.
class size_rule {
 public:
  // -- constructors ---------------------------------------------------------

  /// The number of work items of the request.
  size_rule() = default;
  /// Always `count` elements.
  size_rule(std::size_t count) : constant_(count) {}  // NOLINT: out<float>{1024} reads well
  /// `rule(shape)` elements.
  template <class F>
  requires std::is_invocable_r_v<std::size_t, F&, const request_shape&> size_rule(F rule)
      : rule_(std::move(rule)) {}

  // -- operations -----------------------------------------------------------

  std::size_t operator()(const request_shape& shape) const {
    if (constant_) return *constant_;
    if (rule_) return rule_(shape);
    return shape.work_items();
  }

  /// "work items", "1024" or "a function of the request", for messages.
  std::string describe() const {
    if (constant_) return std::to_string(*constant_);
    return rule_ ? "a function of the request" : "the work items";
  }

 private:
  std::optional<std::size_t> constant_;
  std::function<std::size_t(const request_shape&)> rule_;
};

// -- signature tags ----------------------------------------------------------
//
// A kernel actor's signature lists its kernel's parameters in order, one tag each.

/// A global-memory input (`__global const T*`): received as `In` (val: std::vector<T>, ref:
/// mem_ref<T>). With `expected`, a request whose input has another element count fails.
template <class T, class In = val>
struct in {
  std::optional<size_rule> expected;
};

/// A global-memory output (`__global T*`), `size` elements, sent on as `Out`.
template <class T, class Out = val>
struct out {
  size_rule size;
};

/// A global-memory argument that is read and written in place: received as `In`, sent on as
/// `Out`. With `expected`, a request whose input has another element count fails.
template <class T, class In = val, class Out = val>
struct in_out {
  std::optional<size_rule> expected;
};

/// Work-group local memory (`__local T*`) of `size` elements. OpenCL only: CUDA kernels
/// declare shared memory themselves.
template <class T>
struct local {
  size_rule size;
};

/// A scalar parameter. `priv<T>{v}` is fixed at spawn; `priv<T, val>` is taken from the
/// message, in its place among the inputs.
template <class T, class From = void>
struct priv {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16,
                "priv<T>: a scalar kernel argument is trivially copyable and at most 16 bytes");
  T value{};
};

/// A device-only temporary (`__global T*`) of `size` elements, neither received nor sent.
template <class T>
struct scratch {
  size_rule size;
};

}  // namespace troupe::kernel
