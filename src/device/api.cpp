// The public handles' non-template members, and the states behind buffers and pinned memory.
#include <algorithm>
#include <string>

#include "device/backend.hpp"
#include "device/device_manager.hpp"
#include "troupe/device.hpp"

namespace troupe {

std::string_view to_string(backend b) noexcept {
  return b == backend::cuda ? "cuda" : "opencl";
}

std::string_view to_string(device_type t) noexcept {
  switch (t) {
    case device_type::gpu:
      return "gpu";
    case device_type::cpu:
      return "cpu";
    case device_type::accelerator:
      return "accelerator";
    case device_type::other:
      break;
  }
  return "other";
}

std::string to_string(version v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

// -- nd_range -----------------------------------------------------------------

nd_range::nd_range(extent3 global, extent3 local, extent3 offset) {
  if (global.count == 0) {
    problem_ = "nd_range: the global size has 1 to 3 dimensions";
    return;
  }
  if (local.count != 0 && local.count != global.count) {
    problem_ = "nd_range: the local size has as many dimensions as the global size";
    return;
  }
  if (offset.count != 0 && offset.count != global.count) {
    problem_ = "nd_range: the offset has as many dimensions as the global size";
    return;
  }
  dims_ = global.count;
  global_ = global.values;
  if (local.count != 0) local_ = local.values;
  if (offset.count != 0) {
    offset_ = offset.values;
    for (unsigned d = dims_; d < 3; ++d) offset_[d] = 0;
  }
  for (unsigned d = 0; d < dims_; ++d) {
    if (global_[d] == 0) problem_ = "nd_range: a global size is 0";
    if (local.count != 0 && local_[d] == 0) problem_ = "nd_range: a local size is 0";
    if (local.count != 0 && local_[d] != 0 && global_[d] % local_[d] != 0)
      problem_ = "nd_range: each global size must be a multiple of its local size";
  }
}

namespace detail {

launch_shape make_launch_shape(const nd_range& range) {
  if (range.problem() != nullptr) throw error(errc::invalid_argument, range.problem());
  launch_shape shape;
  shape.dimensions = range.dimensions();
  shape.global = range.global();
  shape.local = range.local();
  shape.offset = range.offset();
  return shape;
}

launch_shape make_launch_shape(const cuda_grid& grid) {
  launch_shape shape;
  shape.dimensions = grid.grid[2] * grid.block[2] > 1   ? 3
                     : grid.grid[1] * grid.block[1] > 1 ? 2
                                                        : 1;
  for (int d = 0; d < 3; ++d) {
    if (grid.grid[d] == 0 || grid.block[d] == 0)
      throw error(errc::invalid_argument, "cuda_grid: grid and block sizes must not be 0");
    shape.global[d] = std::size_t{grid.grid[d]} * grid.block[d];
    shape.local[d] = grid.block[d];
  }
  shape.shared_bytes = grid.shared_bytes;
  return shape;
}

}  // namespace detail

// -- device -------------------------------------------------------------------------

detail::device_state& device::checked() const {
  if (!state_) throw error(errc::no_state, "device: the handle is empty");
  return *state_;
}

const device_info& device::info() const {
  return checked().info();
}

future<program> device::compile(const std::string& source, const std::string& options) const {
  if (!state_)
    return make_exceptional_future<program>(
        error(errc::no_state, "device::compile: the device handle is empty"));
  return state_->compile(source, options);
}

device_queue device::default_queue() const {
  return device_queue{detail::intrusive_ptr<detail::queue_state>{&checked().default_queue()},
                      state_};
}

device_queue device::make_queue() const {
  return device_queue{checked().make_queue()};
}

// -- program ------------------------------------------------------------------------

std::string program::build_log() const {
  return state_ ? state_->backend().build_log() : "";
}

troupe::device program::device() const {
  return troupe::device{state_ ? detail::intrusive_ptr<detail::device_state>{&state_->device()}
                               : nullptr};
}

// -- device_queue ---------------------------------------------------------------------

device_queue device_queue::ending_with(const shared_future<void>& result) {
  const auto& state = detail::future_access::state(const_cast<shared_future<void>&>(result));
  if (!state) return {};
  auto queue = detail::queue_state::ending_with(*state);
  if (!queue) return {};
  return device_queue{queue, detail::intrusive_ptr<detail::device_state>{&queue->device()}};
}

troupe::device device_queue::device() const {
  return troupe::device{state_ ? detail::intrusive_ptr<detail::device_state>{&state_->device()}
                               : nullptr};
}

namespace {

template <class Shape>
future<void> submit_launch(detail::queue_state* queue, const program& prog, std::string name,
                           const Shape& shape, std::vector<detail::launch_argument> args,
                           const dependencies& deps) {
  if (queue == nullptr)
    return make_exceptional_future<void>(
        error(errc::no_state, "launch of kernel '" + name + "': the queue handle is empty"));
  detail::command cmd;
  cmd.what = detail::command::kind::launch;
  cmd.kernel = std::move(name);
  try {
    cmd.shape = detail::make_launch_shape(shape);
  } catch (const error& e) {
    return make_exceptional_future<void>(error(
        e.code(), cmd.who() + " on device '" + queue->device().info().name + "': " + e.what()));
  }
  cmd.program = prog.state();
  cmd.arguments = std::move(args);
  return detail::submit_void(*queue, std::move(cmd), deps);
}

}  // namespace

future<void> device_queue::launch_packed(const program& prog, std::string name,
                                         const nd_range& shape,
                                         std::vector<detail::launch_argument> args,
                                         const dependencies& deps) {
  return submit_launch(state_.get(), prog, std::move(name), shape, std::move(args), deps);
}

future<void> device_queue::launch_packed(const program& prog, std::string name,
                                         const cuda_grid& shape,
                                         std::vector<detail::launch_argument> args,
                                         const dependencies& deps) {
  return submit_launch(state_.get(), prog, std::move(name), shape, std::move(args), deps);
}

// -- device_selection -------------------------------------------------------------------

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

const device& device_selection::front() const {
  if (!devices_.empty()) return devices_.front();
  std::string message = "devices: no device matches";
  message += filters_.empty() ? " (no filters)" : " " + filters_;
  for (const auto& u : unavailable_)
    message += "; " + std::string{to_string(u.backend)} + ": " + u.reason;
  throw error(errc::invalid_argument, message);
}

}  // namespace troupe
