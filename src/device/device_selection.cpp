#include "troupe/device/device_selection.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "troupe/async/error.hpp"

namespace troupe {

template <class Keep>
device_selection device_selection::narrowed(const std::string& filter, Keep keep) const {
  std::vector<device> kept;
  std::copy_if(devices_.begin(), devices_.end(), std::back_inserter(kept), keep);
  device_selection out{std::move(kept), unavailable_};
  out.filters_ = filters_.empty() ? filter : filters_ + ", " + filter;
  return out;
}

device_selection device_selection::of(troupe::backend b) const {
  return narrowed("backend=" + std::string{to_string(b)},
                  [b](const device& d) { return d.info().backend == b; });
}

device_selection device_selection::type(device_type t) const {
  return narrowed("type=" + std::string{to_string(t)},
                  [t](const device& d) { return d.info().type == t; });
}

device_selection device_selection::min_compute_capability(version v) const {
  return narrowed("compute capability>=" + to_string(v), [v](const device& d) {
    return d.info().backend == backend::cuda && d.info().compute_capability >= v;
  });
}

device_selection device_selection::min_opencl_version(version v) const {
  return narrowed("OpenCL>=" + to_string(v), [v](const device& d) {
    return d.info().backend == backend::opencl && d.info().opencl_version >= v;
  });
}

device_selection device_selection::name_contains(const std::string& text) const {
  return narrowed("name contains '" + text + "'", [text](const device& d) {
    return d.info().name.find(text) != std::string::npos;
  });
}

device_selection device_selection::local() const {
  return narrowed("local", [](const device& d) { return d.info().local; });
}

device_selection device_selection::on_node(node_id node) const {
  return narrowed("node=" + std::to_string(node),
                  [node](const device& d) { return d.info().node == node; });
}

const device& device_selection::front() const {
  if (!devices_.empty()) return devices_.front();
  std::string message = "devices: no device matches";
  message += filters_.empty() ? " (no filters)" : " " + filters_;
  for (const auto& u : unavailable_)
    message += "; " + std::string{to_string(u.backend)} + ": " + u.reason;
  throw error(errc::invalid_argument, message);
}

}  // namespace troupe
