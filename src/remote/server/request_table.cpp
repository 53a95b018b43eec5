// Which handler serves which opcode: one table, indexed by opcode.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "remote/server/handlers.hpp"

namespace troupe::remote::server {

namespace {

using handler = void (*)(call&);

// A command: the fields every enqueue starts with are read first; when the command fails, the
// event the client asked for becomes a failed one, so that waiting on it reports the failure.
template <void (*serve)(call&, command&)>
void enqueue(call& c) {
  command cmd(c);
  try {
    serve(c, cmd);
  } catch (const cl_failure& failure) {
    cmd.register_failed_event(failure.code);
    throw;
  } catch (const decode_error&) {
    cmd.register_failed_event(CL_INVALID_VALUE);
    throw;
  }
}

struct entry {
  opcode op;
  handler serve;
};

constexpr entry entries[] = {
    // The session.
    {opcode::ping, handlers::ping},
    {opcode::fence, handlers::fence},
    {opcode::release, handlers::release},
    {opcode::get_info, handlers::get_info},
    // Platforms, devices, contexts and queues.
    {opcode::get_platforms, handlers::get_platforms},
    {opcode::get_device_ids, handlers::get_device_ids},
    {opcode::create_sub_devices, handlers::create_sub_devices},
    {opcode::create_context, handlers::create_context},
    {opcode::create_context_from_type, handlers::create_context_from_type},
    {opcode::create_queue, handlers::create_queue},
    {opcode::flush, handlers::flush},
    {opcode::finish, handlers::finish},
    // Buffers, images and samplers.
    {opcode::create_buffer, handlers::create_buffer},
    {opcode::create_sub_buffer, handlers::create_sub_buffer},
    {opcode::create_image, handlers::create_image},
    {opcode::get_supported_image_formats, handlers::get_supported_image_formats},
    {opcode::create_sampler, handlers::create_sampler},
    // Programs and kernels.
    {opcode::create_program_with_source, handlers::create_program_with_source},
    {opcode::create_program_with_binary, handlers::create_program_with_binary},
    {opcode::create_program_with_builtin_kernels, handlers::create_program_with_builtin_kernels},
    {opcode::build_program, handlers::build_program},
    {opcode::compile_program, handlers::compile_program},
    {opcode::link_program, handlers::link_program},
    {opcode::unload_platform_compiler, handlers::unload_platform_compiler},
    {opcode::create_kernel, handlers::create_kernel},
    {opcode::create_kernels_in_program, handlers::create_kernels_in_program},
    {opcode::set_kernel_arg, handlers::set_kernel_arg},
    // Events.
    {opcode::create_user_event, handlers::create_user_event},
    {opcode::set_user_event_status, handlers::set_user_event_status},
    {opcode::set_event_callback, handlers::set_event_callback},
    {opcode::wait_for_events, handlers::wait_for_events},
    // Enqueued commands.
    {opcode::read_buffer, enqueue<handlers::read_buffer>},
    {opcode::write_buffer, enqueue<handlers::write_buffer>},
    {opcode::read_buffer_rect, enqueue<handlers::read_buffer_rect>},
    {opcode::write_buffer_rect, enqueue<handlers::write_buffer_rect>},
    {opcode::fill_buffer, enqueue<handlers::fill_buffer>},
    {opcode::copy_buffer, enqueue<handlers::copy_buffer>},
    {opcode::copy_buffer_rect, enqueue<handlers::copy_buffer_rect>},
    {opcode::read_image, enqueue<handlers::read_image>},
    {opcode::write_image, enqueue<handlers::write_image>},
    {opcode::fill_image, enqueue<handlers::fill_image>},
    {opcode::copy_image, enqueue<handlers::copy_image>},
    {opcode::copy_image_to_buffer, enqueue<handlers::copy_image_to_buffer>},
    {opcode::copy_buffer_to_image, enqueue<handlers::copy_buffer_to_image>},
    {opcode::ndrange_kernel, enqueue<handlers::ndrange_kernel>},
    {opcode::marker, enqueue<handlers::marker>},
    {opcode::barrier, enqueue<handlers::barrier>},
    {opcode::migrate_mem_objects, enqueue<handlers::migrate_mem_objects>},
};

constexpr std::size_t index_of(opcode op) {
  return static_cast<std::size_t>(op);
}

// The entries by opcode; null where an opcode has no handler.
constexpr auto table = [] {
  constexpr std::size_t size = [] {
    std::size_t largest = 0;
    for (const entry& listed : entries) largest = std::max(largest, index_of(listed.op));
    return largest + 1;
  }();
  std::array<handler, size> by_opcode{};
  for (const entry& listed : entries) {
    if (by_opcode[index_of(listed.op)] != nullptr) throw "two handlers for one opcode";
    by_opcode[index_of(listed.op)] = listed.serve;
  }
  return by_opcode;
}();

}  // namespace

void dispatch(opcode op, call& c) {
  handler serve = index_of(op) < table.size() ? table[index_of(op)] : nullptr;
  if (serve == nullptr) {
    throw decode_error(std::string("opcode ") + to_string(op) + " is not an object request");
  }
  serve(c);
}

}  // namespace troupe::remote::server
