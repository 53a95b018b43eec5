#include "troupe/device/device_queue.hpp"

#include <string>
#include <utility>
#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/device/detail/command.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/device/detail/queue_state.hpp"
#include "troupe/device/detail/typed_commands.hpp"
#include "troupe/device/device.hpp"

namespace troupe {

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

}  // namespace troupe
