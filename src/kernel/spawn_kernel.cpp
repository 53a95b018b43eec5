#include "troupe/kernel/spawn_kernel.hpp"

namespace troupe::kernel::detail {

std::vector<shared_future<program>> programs_for(const source& code,
                                                 const std::vector<device>& devices,
                                                 const std::string& kernel_name) {
  std::vector<shared_future<program>> programs;
  for (const auto& dev : devices) {
    const bool cuda = dev.backend() == backend::cuda;
    const std::string& variant = cuda ? code.cuda : code.opencl;
    if (variant.empty()) {
      throw error{errc::invalid_argument, "spawn_kernel '" + kernel_name + "': the source has no " +
                                              (cuda ? "CUDA" : "OpenCL") + " variant for " +
                                              dev.name()};
    }
    programs.push_back(dev.compile(variant, code.options).share());
  }
  return programs;
}

std::vector<device> devices_or_default(actor_system& system, std::optional<device_set>& asked,
                                       const std::string& kernel_name) {
  if (asked) {
    if (asked->devices.empty()) {
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
  return {system.devices().front()};
}

}  // namespace troupe::kernel::detail
