#pragma once

#include <utility>

// The options of spawn_kernel, given after the nd_range: kernel::on (with device_set.hpp, which
// the building blocks also take), and the three below, each a wrapper of a C++ function that
// spawn_kernel tells apart by its type. source.hpp is the code that comes first.
#include "troupe/kernel/device_set.hpp"
#include "troupe/kernel/source.hpp"

namespace troupe::kernel {

/// Turns a message into the kernel's inputs: `f(message elements...)` returns
/// `std::optional<std::tuple<inputs...>>`, or `std::optional<std::tuple<nd_range, inputs...>>`
/// to set this request's nd_range too. An empty optional refuses the message (an error response).
template <class F>
struct input_mapping {
  F function;
};
/// The spawn option that maps messages to inputs with `f`.
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
/// The spawn option that maps outputs to the response with `f`.
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
/// The spawn option that does the work with `f` where no device can.
template <class F>
fallback_function<F> fallback(F f) {
  return {std::move(f)};
}

}  // namespace troupe::kernel
