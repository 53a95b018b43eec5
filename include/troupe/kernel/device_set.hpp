#pragma once

#include <utility>
#include <vector>

#include "troupe/device/device.hpp"

namespace troupe::kernel {

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

/// The spawn option that runs a kernel actor on `d`.
inline device_set on(device d) {
  return {{std::move(d)}, balance::round_robin};
}
/// The spawn option that runs a kernel actor on `devices`, spreading requests by `policy`.
inline device_set on(std::vector<device> devices, balance policy = balance::round_robin) {
  return {std::move(devices), policy};
}

}  // namespace troupe::kernel
