// The server's request handlers, one per opcode, grouped by the objects they serve, and the
// one place that picks a request's handler (request_table.cpp). A handler reads its request
// from the call and writes its reply's fields there; it throws cl_failure when OpenCL or the
// request's ids refuse it, and decode_error when the request breaks the protocol.
#pragma once

#include "remote/protocol/opcode.hpp"
#include "remote/server/call.hpp"
#include "remote/server/command.hpp"

namespace troupe::remote::server {

/// Serves a request with the handler its opcode names in the request table; an opcode with
/// none (a handshake, a notification, an unknown number) is a decode error.
void dispatch(opcode op, call& c);

namespace handlers {

// The session (handlers_session.cpp) and info queries (handlers_info.cpp).
void ping(call& c);
void fence(call& c);
void release(call& c);
void get_info(call& c);

// Platforms, devices, contexts and queues (handlers_contexts.cpp).
void get_platforms(call& c);
void get_device_ids(call& c);
void create_sub_devices(call& c);
void create_context(call& c);
void create_context_from_type(call& c);
void create_queue(call& c);
void flush(call& c);
void finish(call& c);

// Buffers, images and samplers (handlers_memory.cpp).
void create_buffer(call& c);
void create_sub_buffer(call& c);
void create_image(call& c);
void get_supported_image_formats(call& c);
void create_sampler(call& c);

// Programs and kernels (handlers_programs.cpp).
void create_program_with_source(call& c);
void create_program_with_binary(call& c);
void create_program_with_builtin_kernels(call& c);
void build_program(call& c);
void compile_program(call& c);
void link_program(call& c);
void unload_platform_compiler(call& c);
void create_kernel(call& c);
void create_kernels_in_program(call& c);
void set_kernel_arg(call& c);

// Events (handlers_events.cpp).
void create_user_event(call& c);
void set_user_event_status(call& c);
void set_event_callback(call& c);
void wait_for_events(call& c);

// Enqueued commands get the fields every command starts with already read (`cmd`); when one
// throws, the event the client asked for is registered as a failed one (request_table.cpp).

// Transfers (handlers_transfers.cpp).
void read_buffer(call& c, command& cmd);
void write_buffer(call& c, command& cmd);
void read_buffer_rect(call& c, command& cmd);
void write_buffer_rect(call& c, command& cmd);
void fill_buffer(call& c, command& cmd);
void copy_buffer(call& c, command& cmd);
void copy_buffer_rect(call& c, command& cmd);
void read_image(call& c, command& cmd);
void write_image(call& c, command& cmd);
void fill_image(call& c, command& cmd);
void copy_image(call& c, command& cmd);
void copy_image_to_buffer(call& c, command& cmd);
void copy_buffer_to_image(call& c, command& cmd);

// Launches, markers, barriers and migrations (handlers_commands.cpp).
void ndrange_kernel(call& c, command& cmd);
void marker(call& c, command& cmd);
void barrier(call& c, command& cmd);
void migrate_mem_objects(call& c, command& cmd);

}  // namespace handlers

}  // namespace troupe::remote::server
