#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "troupe/device/device.hpp"

namespace troupe {

/// The devices of an actor system, narrowed by filters: `sys.devices()` lists all of both
/// backends, on every node of the job (this node's first);
/// `.of(backend::cuda).type(device_type::gpu).min_compute_capability({8, 0})` narrows.
class device_selection {
 public:
  // -- member types ---------------------------------------------------------

  /// A backend that offers no devices, and why.
  struct unavailable_backend {
    troupe::backend backend;
    std::string reason;
  };

  // -- constructors ---------------------------------------------------------

  device_selection(std::vector<device> devices, std::vector<unavailable_backend> unavailable)
      : devices_(std::move(devices)), unavailable_(std::move(unavailable)) {}

  // -- filters (each returns a narrower selection) ----------------------------

  device_selection of(troupe::backend b) const;
  device_selection type(device_type t) const;
  /// CUDA devices of at least this compute capability.
  device_selection min_compute_capability(version v) const;
  /// OpenCL devices of at least this OpenCL version.
  device_selection min_opencl_version(version v) const;
  /// Devices whose name contains `text`.
  device_selection name_contains(const std::string& text) const;
  /// Devices this process drives itself.
  device_selection local() const;
  /// Devices of node `node` of the job (see device_info::node).
  device_selection on_node(node_id node) const;

  // -- properties -----------------------------------------------------------

  const std::vector<device>& all() const& noexcept { return devices_; }
  /// On a temporary (`sys.devices().all()`), a copy, so that a range-for over it is safe.
  std::vector<device> all() && { return std::move(devices_); }
  std::size_t size() const noexcept { return devices_.size(); }
  bool empty() const noexcept { return devices_.empty(); }
  auto begin() const noexcept { return devices_.begin(); }
  auto end() const noexcept { return devices_.end(); }
  const device& operator[](std::size_t i) const { return devices_.at(i); }

  /// The first device; throws troupe::error(errc::invalid_argument) saying which filters
  /// matched nothing, and why absent backends are absent.
  const device& front() const;

  /// Backends that offer no devices on this machine, with the reason.
  const std::vector<unavailable_backend>& unavailable() const& noexcept { return unavailable_; }
  std::vector<unavailable_backend> unavailable() && { return std::move(unavailable_); }

  /// The filters applied, for messages ("backend=cuda, type=gpu").
  const std::string& filters() const noexcept { return filters_; }

 private:
  template <class Keep>
  device_selection narrowed(const std::string& filter, Keep keep) const;

  std::vector<device> devices_;
  std::vector<unavailable_backend> unavailable_;
  std::string filters_;
};

}  // namespace troupe
