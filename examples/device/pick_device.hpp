#pragma once

// What every device example starts with: the machine's GPU if it has one, else its first device,
// else nothing (and why).
#include <iostream>
#include <optional>

#include "troupe/troupe.hpp"

/// `quiet`: say nothing (for a second actor system of the same program).
inline std::optional<troupe::device> pick_device(troupe::actor_system& sys, bool quiet = false) {
  auto all = sys.devices();
  if (all.empty()) {
    if (quiet) return std::nullopt;
    std::cout << "no device to run on, so nothing to do:\n";
    for (const auto& u : all.unavailable())
      std::cout << "  no " << troupe::to_string(u.backend) << " device: " << u.reason << "\n";
    return std::nullopt;
  }
  auto gpus = all.type(troupe::device_type::gpu);
  auto dev = gpus.empty() ? all.front() : gpus.front();
  if (!quiet)
    std::cout << "device: " << dev.name() << " (" << troupe::to_string(dev.backend()) << ")\n";
  return dev;
}
