#include "troupe/kernel/spawn_kernel.hpp"

namespace troupe::kernel::detail {

std::vector<shared_future<program>> programs_for(const source& code, std::vector<device>& devices,
                                                 const std::string& kernel_name,
                                                 bool skip_missing) {
  std::vector<shared_future<program>> programs;
  std::vector<device> kept;
  for (const auto& dev : devices) {
    const bool cuda = dev.backend() == backend::cuda;
    const std::string& variant = cuda ? code.cuda : code.opencl;
    if (variant.empty()) {
      if (skip_missing) continue;
      throw error{errc::invalid_argument, "spawn_kernel '" + kernel_name + "': the source has no " +
                                              (cuda ? "CUDA" : "OpenCL") + " variant for " +
                                              dev.name()};
    }
    programs.push_back(dev.compile(variant, code.options).share());
    kept.push_back(dev);
  }
  devices = std::move(kept);
  return programs;
}

std::vector<device> devices_or_default(actor_system& system, std::optional<device_set>& asked,
                                       const std::string& kernel_name, bool may_be_none) {
  if (asked) {
    if (asked->devices.empty() && !may_be_none) {
      throw error{errc::invalid_argument,
                  "spawn_kernel '" + kernel_name + "': kernel::on was given no devices"};
    }
    for (const auto& dev : asked->devices) {
      if (!dev.valid()) {
        throw error{errc::invalid_argument,
                    "spawn_kernel '" + kernel_name + "': kernel::on was given an empty device"};
      }
    }
    return asked->devices;
  }
  auto all = system.devices();
  if (all.empty() && may_be_none) return {};
  return {all.front()};
}

}  // namespace troupe::kernel::detail
