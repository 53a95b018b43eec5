#include "remote/protocol/opcode.hpp"

namespace troupe::remote {

const char* to_string(opcode op) noexcept {
  switch (op) {
#define TROUPE_OPCODE(name) \
  case opcode::name:        \
    return #name;
    TROUPE_OPCODE(hello)
    TROUPE_OPCODE(attach)
    TROUPE_OPCODE(ping)
    TROUPE_OPCODE(fence)
    TROUPE_OPCODE(get_platforms)
    TROUPE_OPCODE(get_device_ids)
    TROUPE_OPCODE(create_sub_devices)
    TROUPE_OPCODE(create_context)
    TROUPE_OPCODE(create_context_from_type)
    TROUPE_OPCODE(create_queue)
    TROUPE_OPCODE(create_buffer)
    TROUPE_OPCODE(create_sub_buffer)
    TROUPE_OPCODE(create_image)
    TROUPE_OPCODE(get_supported_image_formats)
    TROUPE_OPCODE(create_sampler)
    TROUPE_OPCODE(create_program_with_source)
    TROUPE_OPCODE(create_program_with_binary)
    TROUPE_OPCODE(create_program_with_builtin_kernels)
    TROUPE_OPCODE(build_program)
    TROUPE_OPCODE(compile_program)
    TROUPE_OPCODE(link_program)
    TROUPE_OPCODE(unload_platform_compiler)
    TROUPE_OPCODE(create_kernel)
    TROUPE_OPCODE(create_kernels_in_program)
    TROUPE_OPCODE(set_kernel_arg)
    TROUPE_OPCODE(create_user_event)
    TROUPE_OPCODE(set_user_event_status)
    TROUPE_OPCODE(set_event_callback)
    TROUPE_OPCODE(wait_for_events)
    TROUPE_OPCODE(release)
    TROUPE_OPCODE(get_info)
    TROUPE_OPCODE(flush)
    TROUPE_OPCODE(finish)
    TROUPE_OPCODE(read_buffer)
    TROUPE_OPCODE(write_buffer)
    TROUPE_OPCODE(read_buffer_rect)
    TROUPE_OPCODE(write_buffer_rect)
    TROUPE_OPCODE(fill_buffer)
    TROUPE_OPCODE(copy_buffer)
    TROUPE_OPCODE(copy_buffer_rect)
    TROUPE_OPCODE(read_image)
    TROUPE_OPCODE(write_image)
    TROUPE_OPCODE(fill_image)
    TROUPE_OPCODE(copy_image)
    TROUPE_OPCODE(copy_image_to_buffer)
    TROUPE_OPCODE(copy_buffer_to_image)
    TROUPE_OPCODE(ndrange_kernel)
    TROUPE_OPCODE(marker)
    TROUPE_OPCODE(barrier)
    TROUPE_OPCODE(migrate_mem_objects)
    TROUPE_OPCODE(event_callback)
    TROUPE_OPCODE(reply)
#undef TROUPE_OPCODE
  }
  return "unknown opcode";
}

const char* to_string(object_kind kind) noexcept {
  switch (kind) {
    case object_kind::none:
      return "no object";
    case object_kind::platform:
      return "platform";
    case object_kind::device:
      return "device";
    case object_kind::context:
      return "context";
    case object_kind::queue:
      return "command queue";
    case object_kind::mem:
      return "memory object";
    case object_kind::sampler:
      return "sampler";
    case object_kind::program:
      return "program";
    case object_kind::kernel:
      return "kernel";
    case object_kind::event:
      return "event";
  }
  return "unknown kind";
}

}  // namespace troupe::remote
