#pragma once

#include <string>
#include <utility>
#include <vector>

#include "troupe/device/device.hpp"

namespace troupe::kernel {

/// A kernel's code: OpenCL C for OpenCL devices, CUDA C++ (compiled by NVRTC) for CUDA
/// devices, with the build options both get. Each device compiles the variant of its backend;
/// spawning on a device whose variant is empty fails, naming the device.
struct source {
  std::string opencl;
  std::string cuda;
  std::string options;
};

/// How a kernel actor on several devices spreads its requests.
enum class balance {
  round_robin,  ///< one device after the other
  throughput,   ///< each request to the device that will finish it first, by measured speed
};

/// The devices a kernel actor runs on (default: the system's first device), and how it
/// spreads requests over them. A request with mem_ref inputs goes where its data is.
struct device_set {
  std::vector<device> devices;
  balance policy = balance::round_robin;
};

inline device_set on(device d) {
  return {{std::move(d)}, balance::round_robin};
}
inline device_set on(std::vector<device> devices, balance policy = balance::round_robin) {
  return {std::move(devices), policy};
}

/// Turns a message into the kernel's inputs: `f(message elements...)` returns
/// `std::optional<std::tuple<inputs...>>`, or `std::optional<std::tuple<nd_range, inputs...>>`
/// to set this request's nd_range too. An empty optional refuses the message (an error response).
template <class F>
struct input_mapping {
  F function;
};
template <class F>
input_mapping<F> map_input(F f) {
  return {std::move(f)};
}

/// Turns the kernel's outputs into the response: `f(outputs...)` returns the response; a
/// `std::optional` that is empty sends none (a requester then gets errc::broken_promise). It runs
/// where the outputs become ready (the completion path), possibly for several requests at once:
/// keep it free of shared mutable state.
template <class F>
struct output_mapping {
  F function;
};
template <class F>
output_mapping<F> map_output(F f) {
  return {std::move(f)};
}

/// Does the kernel's work on the host where no device can: when the machine has no device (or
/// kernel::on names none), or none has a variant of the code for its backend. `f(inputs...)`
/// takes the kernel's inputs (host vectors and scalars, in signature order) and returns its
/// output, or a std::tuple of its outputs. Only for signatures without mem_refs.
template <class F>
struct fallback_function {
  F function;
};
template <class F>
fallback_function<F> fallback(F f) {
  return {std::move(f)};
}

}  // namespace troupe::kernel
