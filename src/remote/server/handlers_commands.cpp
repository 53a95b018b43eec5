// Enqueued commands: transfers, fills, copies, kernel launches, markers, barriers, migrations.
#include <array>
#include <string>

#include "remote/server/call.hpp"

namespace troupe::remote::server {

namespace {

using triple = std::array<std::size_t, 3>;

triple get_triple(reader& in) {
  triple values{};
  for (auto& value : values) value = in.get<std::uint64_t>();
  return values;
}

cl_mem get_mem(call& c) {
  return c.object<cl_mem>(object_kind::mem, CL_INVALID_MEM_OBJECT);
}

// Bulk bytes that arrived in the request: taken over with the whole payload buffer, so that a
// non-blocking write reads them from where the socket put them (no copy on the server).
struct incoming_bytes {
  std::span<const std::byte> bytes;
  std::vector<std::byte> owner;
};
incoming_bytes take_bytes(call& c) {
  incoming_bytes taken;
  taken.bytes = c.in.get_bytes();
  taken.owner = std::move(c.payload);  // the span stays valid: moving keeps the allocation
  return taken;
}

// The packed slice pitch of a region; 0 for a single slice, which NVIDIA requires of 2-D images.
std::size_t image_slice_pitch(const triple& region, std::size_t element) {
  return region[2] > 1 ? region[0] * element * region[1] : 0;
}

std::size_t image_element_size(cl_mem image) {
  std::size_t size = 0;
  check(clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof size, &size, nullptr),
        "clGetImageInfo(CL_IMAGE_ELEMENT_SIZE)");
  return size;
}

// The bytes of a packed region; a region whose size overflows is refused, not wrapped.
std::size_t region_bytes(const triple& region, std::size_t element) {
  std::size_t size = element;
  for (auto extent : region) {
    if (__builtin_mul_overflow(size, extent, &size)) {
      throw cl_failure{CL_INVALID_VALUE, "region of " + std::to_string(region[0]) + " x " +
                                             std::to_string(region[1]) + " x " +
                                             std::to_string(region[2]) + " overflows"};
    }
  }
  return size;
}

// PoCL 3.1 asserts, aborting the server, when a launch needs more local memory than the device
// has: its __local arguments, each padded to 128 bytes (MAX_EXTENDED_ALIGNMENT), and the
// kernel's own __local variables. OpenCL's answer is CL_OUT_OF_RESOURCES: give it first. When
// a size cannot be queried, the launch itself reports why.
void check_local_memory(cl_command_queue queue, cl_kernel kernel) {
  cl_device_id device = nullptr;
  cl_ulong available = 0, used = 0;
  cl_uint arguments = 0;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) !=
          CL_SUCCESS ||
      clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof available, &available, nullptr) !=
          CL_SUCCESS ||
      clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof used, &used,
                               nullptr) != CL_SUCCESS ||
      clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof arguments, &arguments, nullptr) !=
          CL_SUCCESS) {
    return;
  }
  const cl_ulong padding = 128 * (cl_ulong{arguments} + 16);  // 16: room for automatic locals
  if (used > available || available - used < padding) {
    throw cl_failure{CL_OUT_OF_RESOURCES, "launch needs " + std::to_string(used) +
                                              " bytes of local memory; the device has " +
                                              std::to_string(available)};
  }
}

}  // namespace

namespace {
void run_command(opcode op, call& c, command& cmd);
}  // namespace

command::command(call& c)
    : call_(c), queue_(c.object<cl_command_queue>(object_kind::queue, CL_INVALID_COMMAND_QUEUE)) {
  auto wait_ids = c.in.get_array<std::uint64_t>(1 << 16);
  event_id_ = c.in.get<std::uint64_t>();
  try {
    for (auto id : wait_ids) {
      wait_.push_back(c.object_by_id<cl_event>(id, object_kind::event, CL_INVALID_EVENT_WAIT_LIST));
      // PoCL never runs a command enqueued behind an event that has already failed, and a
      // clFinish or blocking transfer behind it then waits forever. Failed events are common
      // here (register_failed_event makes them), so such a command fails at once instead, as
      // OpenCL has blocking calls do.
      cl_int status = CL_COMPLETE;
      clGetEventInfo(wait_.back(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                     nullptr);
      if (status < 0) {
        throw cl_failure{CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                         "event " + std::to_string(id) + " of the wait list failed"};
      }
    }
  } catch (const cl_failure& failure) {
    register_failed_event(failure.code);
    throw;
  }
}

command::~command() {
  if (event_ != nullptr) clReleaseEvent(event_);
}

void command::finish(cl_int status, const char* what) {
  if (status == CL_SUCCESS) {
    if (event_id_ != 0) {
      clRetainEvent(event_);
      registered_ = true;
      call_.owner.add(event_id_, object_kind::event, event_);
    }
    return;
  }
  throw cl_failure{status, what};
}

void command::register_failed_event(cl_int status) {
  if (event_id_ == 0 || registered_) return;
  registered_ = true;
  // The client already holds this event: make it a failed one, so that waiting on it or on
  // anything after it reports the failure instead of hanging.
  cl_context context = nullptr;
  clGetCommandQueueInfo(queue_, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
  cl_int created = CL_SUCCESS;
  cl_event failed = clCreateUserEvent(context, &created);
  if (created == CL_SUCCESS) {
    clSetUserEventStatus(failed, status < 0 ? status : CL_OUT_OF_RESOURCES);
    call_.owner.add(event_id_, object_kind::event, failed);
  }
}

void command::keep_until_complete(std::vector<std::byte>&& bytes) {
  // Not by an event callback: PoCL calls none for a command that fails.
  if (!bytes.empty() && event_ != nullptr)
    call_.owner.hold_until_complete(event_, std::move(bytes));
}

void handle_command(opcode op, call& c) {
  command cmd(c);
  try {
    run_command(op, c, cmd);
  } catch (const cl_failure& failure) {
    cmd.register_failed_event(failure.code);
    throw;
  } catch (const decode_error&) {
    cmd.register_failed_event(CL_INVALID_VALUE);
    throw;
  }
}

namespace {

void run_command(opcode op, call& c, command& cmd) {
  switch (op) {
    case opcode::read_buffer: {
      auto buffer = get_mem(c);
      auto offset = c.in.get<std::uint64_t>();
      auto size = c.in.get<std::uint64_t>();
      if (size > max_chunk) throw cl_failure{CL_INVALID_VALUE, "read over one chunk"};
      c.reply_data.resize(size);
      cmd.finish(
          clEnqueueReadBuffer(cmd.queue(), buffer, cmd.blocking_read(), offset, size,
                              c.reply_data.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
          "clEnqueueReadBuffer");
      cmd.finish_read();
      c.out.put<std::uint64_t>(size);
      return;
    }
    case opcode::write_buffer: {
      auto buffer = get_mem(c);
      auto blocking = c.in.get<std::uint8_t>() != 0;
      auto offset = c.in.get<std::uint64_t>();
      auto data = take_bytes(c);
      cmd.finish(clEnqueueWriteBuffer(cmd.queue(), buffer, blocking ? CL_TRUE : CL_FALSE, offset,
                                      data.bytes.size(), data.bytes.data(), cmd.wait_count(),
                                      cmd.wait_list(), cmd.event()),
                 "clEnqueueWriteBuffer");
      if (!blocking) cmd.keep_until_complete(std::move(data.owner));
      return;
    }
    case opcode::read_buffer_rect: {
      auto buffer = get_mem(c);
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      auto row_pitch = c.in.get<std::uint64_t>();
      auto slice_pitch = c.in.get<std::uint64_t>();
      auto size = region_bytes(region, 1);
      if (size > max_chunk) throw cl_failure{CL_INVALID_VALUE, "rect read over one chunk"};
      c.reply_data.resize(size);
      triple host_origin{0, 0, 0};
      // Packed on the host side: the client scatters rows into its own pitches.
      cmd.finish(clEnqueueReadBufferRect(cmd.queue(), buffer, cmd.blocking_read(), origin.data(),
                                         host_origin.data(), region.data(), row_pitch, slice_pitch,
                                         region[0], region[0] * region[1], c.reply_data.data(),
                                         cmd.wait_count(), cmd.wait_list(), cmd.event()),
                 "clEnqueueReadBufferRect");
      cmd.finish_read();
      c.out.put<std::uint64_t>(size);
      return;
    }
    case opcode::write_buffer_rect: {
      auto buffer = get_mem(c);
      auto blocking = c.in.get<std::uint8_t>() != 0;
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      auto row_pitch = c.in.get<std::uint64_t>();
      auto slice_pitch = c.in.get<std::uint64_t>();
      auto data = take_bytes(c);
      if (data.bytes.size() != region_bytes(region, 1)) {
        throw cl_failure{CL_INVALID_VALUE, "rect write with " + std::to_string(data.bytes.size()) +
                                               " bytes for its region"};
      }
      triple host_origin{0, 0, 0};
      cmd.finish(
          clEnqueueWriteBufferRect(cmd.queue(), buffer, blocking ? CL_TRUE : CL_FALSE,
                                   origin.data(), host_origin.data(), region.data(), row_pitch,
                                   slice_pitch, region[0], region[0] * region[1], data.bytes.data(),
                                   cmd.wait_count(), cmd.wait_list(), cmd.event()),
          "clEnqueueWriteBufferRect");
      if (!blocking) cmd.keep_until_complete(std::move(data.owner));
      return;
    }
    case opcode::fill_buffer: {
      auto buffer = get_mem(c);
      auto pattern = c.in.get_bytes();
      auto offset = c.in.get<std::uint64_t>();
      auto size = c.in.get<std::uint64_t>();
      cmd.finish(clEnqueueFillBuffer(cmd.queue(), buffer, pattern.data(), pattern.size(), offset,
                                     size, cmd.wait_count(), cmd.wait_list(), cmd.event()),
                 "clEnqueueFillBuffer");
      return;
    }
    case opcode::copy_buffer: {
      auto source = get_mem(c);
      auto target = get_mem(c);
      auto source_offset = c.in.get<std::uint64_t>();
      auto target_offset = c.in.get<std::uint64_t>();
      auto size = c.in.get<std::uint64_t>();
      cmd.finish(clEnqueueCopyBuffer(cmd.queue(), source, target, source_offset, target_offset,
                                     size, cmd.wait_count(), cmd.wait_list(), cmd.event()),
                 "clEnqueueCopyBuffer");
      return;
    }
    case opcode::copy_buffer_rect: {
      auto source = get_mem(c);
      auto target = get_mem(c);
      auto source_origin = get_triple(c.in);
      auto target_origin = get_triple(c.in);
      auto region = get_triple(c.in);
      std::array<std::size_t, 4> pitches{};
      for (auto& pitch : pitches) pitch = c.in.get<std::uint64_t>();
      cmd.finish(clEnqueueCopyBufferRect(cmd.queue(), source, target, source_origin.data(),
                                         target_origin.data(), region.data(), pitches[0],
                                         pitches[1], pitches[2], pitches[3], cmd.wait_count(),
                                         cmd.wait_list(), cmd.event()),
                 "clEnqueueCopyBufferRect");
      return;
    }
    case opcode::read_image: {
      auto image = get_mem(c);
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      auto element = image_element_size(image);
      auto size = region_bytes(region, element);
      if (size > max_chunk) throw cl_failure{CL_INVALID_VALUE, "image read over one chunk"};
      c.reply_data.resize(size);
      cmd.finish(
          clEnqueueReadImage(cmd.queue(), image, cmd.blocking_read(), origin.data(), region.data(),
                             region[0] * element, image_slice_pitch(region, element),
                             c.reply_data.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
          "clEnqueueReadImage");
      cmd.finish_read();
      c.out.put<std::uint64_t>(size);
      return;
    }
    case opcode::write_image: {
      auto image = get_mem(c);
      auto blocking = c.in.get<std::uint8_t>() != 0;
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      auto data = take_bytes(c);
      auto element = image_element_size(image);
      if (data.bytes.size() != region_bytes(region, element)) {
        throw cl_failure{CL_INVALID_VALUE, "image write with " + std::to_string(data.bytes.size()) +
                                               " bytes for its region"};
      }
      cmd.finish(clEnqueueWriteImage(cmd.queue(), image, blocking ? CL_TRUE : CL_FALSE,
                                     origin.data(), region.data(), region[0] * element,
                                     image_slice_pitch(region, element), data.bytes.data(),
                                     cmd.wait_count(), cmd.wait_list(), cmd.event()),
                 "clEnqueueWriteImage");
      if (!blocking) cmd.keep_until_complete(std::move(data.owner));
      return;
    }
    case opcode::fill_image: {
      auto image = get_mem(c);
      auto color = c.in.get_bytes();
      if (color.size() != 16) throw cl_failure{CL_INVALID_VALUE, "fill colour is not 16 bytes"};
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      cmd.finish(clEnqueueFillImage(cmd.queue(), image, color.data(), origin.data(), region.data(),
                                    cmd.wait_count(), cmd.wait_list(), cmd.event()),
                 "clEnqueueFillImage");
      return;
    }
    case opcode::copy_image: {
      auto source = get_mem(c);
      auto target = get_mem(c);
      auto source_origin = get_triple(c.in);
      auto target_origin = get_triple(c.in);
      auto region = get_triple(c.in);
      cmd.finish(clEnqueueCopyImage(cmd.queue(), source, target, source_origin.data(),
                                    target_origin.data(), region.data(), cmd.wait_count(),
                                    cmd.wait_list(), cmd.event()),
                 "clEnqueueCopyImage");
      return;
    }
    case opcode::copy_image_to_buffer: {
      auto source = get_mem(c);
      auto target = get_mem(c);
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      auto offset = c.in.get<std::uint64_t>();
      cmd.finish(
          clEnqueueCopyImageToBuffer(cmd.queue(), source, target, origin.data(), region.data(),
                                     offset, cmd.wait_count(), cmd.wait_list(), cmd.event()),
          "clEnqueueCopyImageToBuffer");
      return;
    }
    case opcode::copy_buffer_to_image: {
      auto source = get_mem(c);
      auto target = get_mem(c);
      auto offset = c.in.get<std::uint64_t>();
      auto origin = get_triple(c.in);
      auto region = get_triple(c.in);
      cmd.finish(
          clEnqueueCopyBufferToImage(cmd.queue(), source, target, offset, origin.data(),
                                     region.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
          "clEnqueueCopyBufferToImage");
      return;
    }
    case opcode::ndrange_kernel: {
      auto kernel = c.object<cl_kernel>(object_kind::kernel, CL_INVALID_KERNEL);
      check_local_memory(cmd.queue(), kernel);
      auto dimensions = c.in.get<std::uint32_t>();
      auto offset = c.in.get_array<std::uint64_t>(3);
      auto global = c.in.get_array<std::uint64_t>(3);
      auto local = c.in.get_array<std::uint64_t>(3);
      auto fits = [&](const std::vector<std::uint64_t>& sizes) {
        return sizes.empty() || sizes.size() == dimensions;
      };
      if (global.size() != dimensions || !fits(offset) || !fits(local)) {
        throw cl_failure{CL_INVALID_WORK_DIMENSION, "launch of " + std::to_string(dimensions) +
                                                        " dimensions with a global size of " +
                                                        std::to_string(global.size())};
      }
      std::vector<std::size_t> offsets(offset.begin(), offset.end());
      std::vector<std::size_t> globals(global.begin(), global.end());
      std::vector<std::size_t> locals(local.begin(), local.end());
      cmd.finish(clEnqueueNDRangeKernel(cmd.queue(), kernel, dimensions,
                                        offsets.empty() ? nullptr : offsets.data(), globals.data(),
                                        locals.empty() ? nullptr : locals.data(), cmd.wait_count(),
                                        cmd.wait_list(), cmd.event_if_wanted()),
                 "clEnqueueNDRangeKernel");
      return;
    }
    case opcode::marker:
    case opcode::barrier: {
      cl_int status = op == opcode::marker
                          ? clEnqueueMarkerWithWaitList(cmd.queue(), cmd.wait_count(),
                                                        cmd.wait_list(), cmd.event())
                          : clEnqueueBarrierWithWaitList(cmd.queue(), cmd.wait_count(),
                                                         cmd.wait_list(), cmd.event());
      // Once enqueued, even if registering the client's event id fails below (PoCL: see
      // session::hold_until_complete).
      if (status == CL_SUCCESS) c.owner.hold_until_complete(*cmd.event());
      cmd.finish(status, op == opcode::marker ? "clEnqueueMarkerWithWaitList"
                                              : "clEnqueueBarrierWithWaitList");
      return;
    }
    case opcode::migrate_mem_objects: {
      auto objects = c.objects<cl_mem>(object_kind::mem, CL_INVALID_MEM_OBJECT);
      auto flags = c.in.get<std::uint64_t>();
      cmd.finish(clEnqueueMigrateMemObjects(cmd.queue(), static_cast<cl_uint>(objects.size()),
                                            objects.data(), flags, cmd.wait_count(),
                                            cmd.wait_list(), cmd.event()),
                 "clEnqueueMigrateMemObjects");
      return;
    }
    default:
      throw decode_error(std::string("opcode ") + to_string(op) + " is not a command");
  }
}

}  // namespace

}  // namespace troupe::remote::server
