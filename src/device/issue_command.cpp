#include "device/issue_command.hpp"

#include <string>
#include <string_view>

#include "troupe/device/detail/buffer_state.hpp"
#include "troupe/device/detail/program_state.hpp"

namespace troupe::detail {

namespace {

[[noreturn]] void fail(errc code, const std::string& message) {
  throw error(code, message);
}

/// The buffer's memory on `device`. `described()` names the buffer for an error ("<caller>: the
/// source"), built only then.
template <class Describe>
backend_memory& memory_on(device_state& device, buffer_state& buffer, const Describe& described) {
  if (&buffer.device() != &device)
    fail(errc::invalid_argument, described() + " buffer is on device '" +
                                     buffer.device().info().name + "', the queue on device '" +
                                     device.info().name + "'");
  return *buffer.memory();
}

/// Whether `parameter` is `element` followed by a '*'.
bool points_to(const std::string& parameter, std::string_view element) {
  return parameter.size() == element.size() + 1 && parameter.back() == '*' &&
         parameter.compare(0, element.size(), element) == 0;
}

std::string describe(const kernel_param& p) {
  switch (p.what) {
    case kernel_param::kind::global_pointer:
      return "a __global " + (p.type_name.empty() ? std::string{"pointer"} : p.type_name) +
             " (a buffer)";
    case kernel_param::kind::constant_pointer:
      return "a __constant " + (p.type_name.empty() ? std::string{"pointer"} : p.type_name) +
             " (a buffer)";
    case kernel_param::kind::local_pointer:
      return "a __local pointer (a local_memory<T>)";
    case kernel_param::kind::scalar:
      return (p.type_name.empty() ? std::string{"a value"} : "a " + p.type_name) + " of " +
             std::to_string(p.size) + " bytes";
    case kernel_param::kind::unknown:
      break;
  }
  return "a parameter of " + std::to_string(p.size) + " bytes";
}

std::string describe(const launch_argument& a) {
  std::string type = *a.type_name != '\0' ? a.type_name : "T";
  switch (a.what) {
    case launch_argument::kind::buffer:
      return "a buffer<" + type + ">";
    case launch_argument::kind::local:
      return "a local_memory<" + type + ">";
    case launch_argument::kind::scalar:
      break;
  }
  return "a " + (*a.type_name != '\0' ? type : std::string{"value"}) + " of " +
         std::to_string(a.size) + " bytes";
}

/// Whether argument `a` fits parameter `p`; the kinds and, where both are known, the types.
bool fits(const kernel_param& p, const launch_argument& a) {
  using pk = kernel_param::kind;
  using ak = launch_argument::kind;
  switch (a.what) {
    case ak::buffer:
      if (p.what == pk::unknown) return p.size == 0 || p.size == sizeof(void*);
      if (p.what != pk::global_pointer && p.what != pk::constant_pointer) return false;
      return p.type_name.empty() || *a.type_name == '\0' || points_to(p.type_name, a.type_name);
    case ak::local:
      return p.what == pk::local_pointer || p.what == pk::unknown;
    case ak::scalar:
      if (p.what != pk::scalar && p.what != pk::unknown) return false;
      if (p.size != 0 && p.size != a.size) return false;
      return p.what == pk::unknown || p.type_name.empty() || *a.type_name == '\0' ||
             p.type_name == a.type_name;
  }
  return false;
}

event_ptr launch(device_state& device, backend_queue& queue, command& cmd, wait_list wait,
                 launch_event marking) {
  // Described only when a launch fails, not on every launch.
  const auto where = [&] {
    return "launch of kernel '" + cmd.kernel + "' on device '" + device.info().name + "'";
  };
  if (!cmd.program) fail(errc::no_state, where() + ": the program handle is empty");
  if (&cmd.program->device() != &device)
    fail(errc::invalid_argument, where() + ": the program was built for device '" +
                                     cmd.program->device().info().name + "'");
  auto& kernel = cmd.program->kernel(cmd.kernel);
  if (kernel.params_known) {
    if (kernel.params.size() != cmd.arguments.size())
      fail(errc::invalid_argument,
           where() + ": the kernel takes " + std::to_string(kernel.params.size()) +
               " arguments, the launch passed " + std::to_string(cmd.arguments.size()));
    for (std::size_t i = 0; i < cmd.arguments.size(); ++i)
      if (!fits(kernel.params[i], cmd.arguments[i]))
        fail(errc::invalid_argument, where() + ": argument " + std::to_string(i) + " must be " +
                                         describe(kernel.params[i]) + ", the launch passed " +
                                         describe(cmd.arguments[i]));
  }
  launch_list<kernel_argument> args(cmd.arguments.size());
  for (std::size_t i = 0; i < cmd.arguments.size(); ++i) {
    auto& in = cmd.arguments[i];
    auto& out = args[i];
    out.type_name = in.type_name;
    switch (in.what) {
      case launch_argument::kind::buffer:
        if (!in.buffer)
          fail(errc::no_state, where() + ": argument " + std::to_string(i) + " is an empty buffer");
        out.what = kernel_argument::kind::memory;
        out.memory = &memory_on(device, *in.buffer,
                                [&] { return where() + ": the argument " + std::to_string(i); });
        break;
      case launch_argument::kind::scalar:
        out.what = kernel_argument::kind::scalar;
        out.scalar = in.scalar;
        out.size = in.size;
        break;
      case launch_argument::kind::local:
        out.what = kernel_argument::kind::local;
        out.size = in.size;
        break;
    }
  }
  return queue.launch(kernel, cmd.shape, args.span(), wait, marking);
}

}  // namespace

event_ptr issue_command(device_state& device, backend_queue& queue, command& cmd, wait_list wait,
                        launch_event marking) {
  if (cmd.what == command::kind::launch) return launch(device, queue, cmd, wait, marking);
  if (cmd.bytes == 0) return nullptr;
  auto& memory = memory_on(device, *cmd.buffer, [&] {
    return cmd.caller + (cmd.what == command::kind::copy ? ": the source" : ": the");
  });
  switch (cmd.what) {
    case command::kind::write:
      return queue.write(memory, cmd.offset, cmd.host_source, cmd.bytes, cmd.pinned, wait);
    case command::kind::read:
      return queue.read(memory, cmd.offset, cmd.host_destination, cmd.bytes, cmd.pinned,
                        cmd.destination_ready, wait);
    case command::kind::fill:
      return queue.fill(memory, cmd.offset, cmd.bytes, cmd.pattern.data(), cmd.pattern_size, wait);
    case command::kind::copy:
      if (&cmd.target->device() == &device)
        return queue.copy(memory, cmd.offset, *cmd.target->memory(), cmd.target_offset, cmd.bytes,
                          wait);
      return device.backend().copy_peer(queue, memory, cmd.offset, cmd.target->device().backend(),
                                        *cmd.target->memory(), cmd.target_offset, cmd.bytes, wait);
    case command::kind::launch:
      break;
  }
  return nullptr;
}

}  // namespace troupe::detail
