#pragma once

#include <optional>
#include <type_traits>

#include "troupe/kernel/request_shape.hpp"
#include "troupe/kernel/size_rule.hpp"

namespace troupe::kernel {

/// How a global-memory argument is received or sent on: `val` is a host `std::vector<T>`,
/// copied to the device (or back) through the device's pinned staging blocks; `ref` is a
/// `mem_ref<T>` that stays on the device; `pinned` is a `host_buffer<T>` (page-locked memory,
/// see device::allocate_host), copied by DMA from where it lies, with no staging copy. A pinned
/// output is read into a page-locked block that the actor reuses once its last host_buffer is
/// gone. Pinned memory cannot cross nodes: a message with a host_buffer fails to send there.
struct val {};
struct ref {};
struct pinned {};

// -- signature tags ----------------------------------------------------------
//
// A kernel actor's signature lists its kernel's parameters in order, one tag each.

/// A global-memory input (`__global const T*`): received as `In` (val: std::vector<T>, ref:
/// mem_ref<T>, pinned: host_buffer<T>). With `expected`, a request whose input has another element
/// count fails.
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
