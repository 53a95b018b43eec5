// Every frame's opcode, and the kinds of object a handle id can name.
#pragma once

#include <cstdint>

namespace troupe::remote {

/// What a frame asks for. Values are part of the protocol: append only.
enum class opcode : std::uint16_t {
  // Session (docs/remote-protocol.md, "Handshake").
  hello = 1,   ///< open a session: magic, version, token
  attach = 2,  ///< join this connection to an open session: magic, version, token, session, key
  ping = 3,    ///< a round trip; its reply proves every earlier frame was processed
  fence = 4,   ///< wait until another connection of the session processed a given frame

  // Objects.
  get_platforms = 10,
  get_device_ids = 11,
  create_sub_devices = 12,
  create_context = 13,
  create_context_from_type = 14,
  create_queue = 15,
  create_buffer = 16,
  create_sub_buffer = 17,
  create_image = 18,
  get_supported_image_formats = 19,
  create_sampler = 20,
  create_program_with_source = 21,
  create_program_with_binary = 22,
  create_program_with_builtin_kernels = 23,
  build_program = 24,
  compile_program = 25,
  link_program = 26,
  unload_platform_compiler = 27,
  create_kernel = 28,
  create_kernels_in_program = 29,
  set_kernel_arg = 30,
  create_user_event = 31,
  set_user_event_status = 32,
  set_event_callback = 33,
  wait_for_events = 34,
  release = 35,   ///< the client's last reference to an object is gone
  get_info = 36,  ///< every clGet*Info call (info_query says which)

  // Commands.
  flush = 50,
  finish = 51,
  read_buffer = 52,
  write_buffer = 53,
  read_buffer_rect = 54,
  write_buffer_rect = 55,
  fill_buffer = 56,
  copy_buffer = 57,
  copy_buffer_rect = 58,
  read_image = 59,
  write_image = 60,
  fill_image = 61,
  copy_image = 62,
  copy_image_to_buffer = 63,
  copy_buffer_to_image = 64,
  ndrange_kernel = 65,
  marker = 66,
  barrier = 67,
  migrate_mem_objects = 68,

  // Server to client, on the session's first connection.
  event_callback = 100,  ///< an event reached the state a callback waits for

  reply = 0x8000,  ///< OR-ed into the opcode of a reply frame
};

/// The OpenCL object a handle id names. Ids are per session and per kind-independent counter.
enum class object_kind : std::uint8_t {
  none = 0,
  platform = 1,
  device = 2,
  context = 3,
  queue = 4,
  mem = 5,
  sampler = 6,
  program = 7,
  kernel = 8,
  event = 9,
};
inline constexpr int object_kind_count = 10;

/// Which clGet*Info function a get_info frame stands for.
enum class info_query : std::uint8_t {
  platform = 1,
  device = 2,
  context = 3,
  queue = 4,
  mem = 5,
  image = 6,
  sampler = 7,
  program = 8,
  program_build = 9,  ///< extra id: the device
  kernel = 10,
  kernel_work_group = 11,  ///< extra id: the device
  kernel_arg = 12,         ///< extra: the argument index
  event = 13,
  event_profiling = 14,
};

/// How a kernel argument travels in a set_kernel_arg frame.
enum class argument_form : std::uint8_t {
  bytes = 0,    ///< the value's bytes, or none (null value: local memory or a null buffer)
  mem = 1,      ///< a buffer or image id
  sampler = 2,  ///< a sampler id
};

const char* to_string(opcode op) noexcept;
const char* to_string(object_kind kind) noexcept;

}  // namespace troupe::remote
