#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "troupe/core/actor_system.hpp"
#include "troupe/device/device_selection.hpp"
#include "troupe/kernel/detail/fallback_actor.hpp"
#include "troupe/kernel/detail/kernel_actor.hpp"
#include "troupe/kernel/kernel_options.hpp"

namespace troupe {

namespace kernel::detail {

/// The programs of `code` for each device: compiled (asynchronously) from the device's
/// variant; throws troupe::error naming the device whose backend has no variant.
/// With `skip_missing`, a device without its variant is removed from `devices` instead.
std::vector<shared_future<program>> programs_for(const source& code, std::vector<device>& devices,
                                                 const std::string& kernel_name, bool skip_missing);

/// The devices of a kernel actor: those asked for, else the system's first; none (for the
/// fallback) when `may_be_none` and the machine has none.
std::vector<device> devices_or_default(actor_system& system, std::optional<device_set>& asked,
                                       const std::string& kernel_name, bool may_be_none);

/// Options first, then signature tags: the pieces of a spawn_kernel call, sorted.
template <class InputMap, class OutputMap, class Fallback, class... Tags>
struct spawn_arguments {
  std::optional<device_set> devices;
  InputMap input_map;
  OutputMap output_map;
  Fallback fallback;
  std::tuple<Tags...> tags;
};

template <class IM, class OM, class FB>
spawn_arguments<IM, OM, FB> sort_arguments(std::optional<device_set> devices, IM im, OM om, FB fb) {
  return {std::move(devices), std::move(im), std::move(om), std::move(fb), {}};
}

template <class IM, class OM, class FB, class First, class... Rest>
auto sort_arguments(std::optional<device_set> devices, IM im, OM om, FB fb, First first,
                    Rest... rest) {
  if constexpr (std::is_same_v<First, device_set>) {
    return sort_arguments(std::move(first), std::move(im), std::move(om), std::move(fb),
                          std::move(rest)...);
  } else if constexpr (is_input_mapping<First>::value) {
    static_assert(std::is_same_v<IM, no_mapping>, "spawn_kernel: give map_input once");
    return sort_arguments(std::move(devices), std::move(first.function), std::move(om),
                          std::move(fb), std::move(rest)...);
  } else if constexpr (is_output_mapping<First>::value) {
    static_assert(std::is_same_v<OM, no_mapping>, "spawn_kernel: give map_output once");
    return sort_arguments(std::move(devices), std::move(im), std::move(first.function),
                          std::move(fb), std::move(rest)...);
  } else if constexpr (is_fallback<First>::value) {
    static_assert(std::is_same_v<FB, no_mapping>, "spawn_kernel: give fallback once");
    return sort_arguments(std::move(devices), std::move(im), std::move(om),
                          std::move(first.function), std::move(rest)...);
  } else {
    static_assert(is_tag_v<First> && (is_tag_v<Rest> && ...),
                  "spawn_kernel: after the nd_range come options (on, map_input, map_output, "
                  "fallback), then the signature: in, out, in_out, local, priv, scratch");
    return spawn_arguments<IM, OM, FB, First, Rest...>{std::move(devices),
                                                       std::move(im),
                                                       std::move(om),
                                                       std::move(fb),
                                                       {std::move(first), std::move(rest)...}};
  }
}

template <class IM, class OM, class FB, class... Tags>
actor spawn_sorted(actor_system& system, std::vector<device> devices,
                   std::vector<shared_future<program>> programs, std::string name,
                   const nd_range& range, spawn_arguments<IM, OM, FB, Tags...> sorted,
                   balance policy) {
  if (devices.empty()) {
    if constexpr (std::is_same_v<FB, no_mapping>) {
      throw error{errc::invalid_argument,
                  "spawn_kernel '" + name + "': no device can run it, and it has no fallback"};
    } else {
      return spawn_fallback<IM, OM, FB, Tags...>(
          system, std::move(name), std::move(sorted.input_map), std::move(sorted.output_map),
          std::move(sorted.fallback));
    }
  }
  return system.spawn<kernel_actor<IM, OM, Tags...>>(
      std::move(name), device_set{std::move(devices), policy}, std::move(programs), range,
      std::move(sorted.input_map), std::move(sorted.output_map), std::move(sorted.tags));
}

}  // namespace kernel::detail

/// Spawns a kernel actor: `code` (a kernel::source with a variant per backend, the source of
/// one backend as a string, or a program already built for a device), the kernel's name, the
/// nd_range of a request, options (kernel::on, kernel::map_input, kernel::map_output,
/// kernel::fallback), then one signature tag per kernel parameter. Reached as
/// `sys.spawn_kernel(...)`. Throws troupe::error when a device has no variant of the code; a
/// compile error is the error response of every request, with the build log.
template <class Code, class... Args>
actor spawn_kernel_in(actor_system& system, Code code, std::string name, const nd_range& range,
                      Args... args) {
  using namespace kernel::detail;
  auto sorted = sort_arguments(std::optional<kernel::device_set>{}, no_mapping{}, no_mapping{},
                               no_mapping{}, std::move(args)...);
  constexpr bool has_fallback = !std::is_same_v<decltype(sorted.fallback), no_mapping>;
  const kernel::balance policy =
      sorted.devices ? sorted.devices->policy : kernel::balance::round_robin;
  if constexpr (std::is_same_v<Code, program>) {
    if (!code.valid()) {
      throw error{errc::invalid_argument, "spawn_kernel '" + name + "': the program is empty"};
    }
    if (sorted.devices &&
        (sorted.devices->devices.size() != 1 || !(sorted.devices->devices[0] == code.device()))) {
      throw error{errc::invalid_argument, "spawn_kernel '" + name + "': the program is built for " +
                                              code.device().name() +
                                              "; give a kernel::source to run on other devices"};
    }
    std::vector<shared_future<program>> programs{make_ready_future(code).share()};
    return spawn_sorted(system, {code.device()}, std::move(programs), std::move(name), range,
                        std::move(sorted), policy);
  } else {
    kernel::source variants;
    if constexpr (std::is_same_v<Code, kernel::source>) {
      variants = std::move(code);
    } else {
      static_assert(std::is_convertible_v<Code, std::string>,
                    "spawn_kernel: the code is a kernel::source, a string or a program");
      variants.opencl = variants.cuda = std::string{std::move(code)};
    }
    auto devices = devices_or_default(system, sorted.devices, name, has_fallback);
    // With a fallback, devices without a variant of the code are left out (if none is left,
    // the fallback does the work on the host); without one, they are an error.
    auto programs = programs_for(variants, devices, name, has_fallback);
    return spawn_sorted(system, std::move(devices), std::move(programs), std::move(name), range,
                        std::move(sorted), policy);
  }
}

}  // namespace troupe
