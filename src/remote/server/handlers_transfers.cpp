// Enqueued transfers: reads, writes, fills and copies of buffers and images.
#include <array>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "remote/protocol/rect_checks.hpp"
#include "remote/server/handlers.hpp"
#include "remote/server/transfer_checks.hpp"

namespace troupe::remote::server {

namespace {

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

// A non-blocking write's bytes stay on the server until it completes: they count against the
// session's host memory quota until then (the whole frame, which is what stays).
session_quota::charge hold_for_write(call& c, bool blocking, const incoming_bytes& data,
                                     const char* what) {
  if (blocking) return {};
  return c.owner.take_host_memory(data.owner.size(), what);
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

// Where a write's bytes are taken from: a pinned buffer of the session's where one is free (the
// bytes are copied there, and the request's memory stays with the connection for its next
// frame), else the request's own memory, taken over, held until a non-blocking write is over
// and counted in the session's host memory until then.
struct write_source {
  host_bytes kept;
  const std::byte* from = nullptr;
  session_quota::charge charge;
};
write_source write_from(call& c, cl_command_queue queue, bool blocking,
                        std::span<const std::byte> bytes, const char* what) {
  write_source source;
  if (auto pinned = c.owner.lend_pinned(queue, bytes.size())) {
    std::memcpy(pinned.data(), bytes.data(), bytes.size());
    source.kept = host_bytes(std::move(pinned));
    source.from = source.kept.data();
    return source;
  }
  incoming_bytes data{bytes, std::move(c.payload)};  // moving keeps the allocation
  source.charge = hold_for_write(c, blocking, data, what);
  source.from = bytes.data();
  source.kept = host_bytes(std::move(data.owner));
  return source;
}

// Where a read's bytes land on the server: a pinned buffer of the session's (pinned_staging.hpp:
// zeroed when made, then holding only this session's earlier transfers), or else plain memory from
// the session's host memory quota, zeroed, so that a read the device never wrote sends nothing
// another session left there.
host_bytes read_landing(call& c, cl_command_queue queue, std::size_t size, const char* what) {
  if (auto pinned = c.owner.lend_pinned(queue, size)) return host_bytes(std::move(pinned));
  c.reply_charge = c.owner.take_host_memory(size, what);
  return std::vector<std::byte>(size);
}

}  // namespace

namespace handlers {

void read_buffer(call& c, command& cmd) {
  auto buffer = get_mem(c);
  auto offset = c.in.get<std::uint64_t>();
  auto size = c.in.get<std::uint64_t>();
  if (size > max_chunk) throw cl_failure{CL_INVALID_VALUE, "read over one chunk"};
  check_buffer_span(buffer, offset, size, "the read");
  c.reply_data = read_landing(c, cmd.queue(), size, "clEnqueueReadBuffer");
  cmd.finish_read(
      clEnqueueReadBuffer(cmd.queue(), buffer, cmd.blocking_read(), offset, size,
                          c.reply_data.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueReadBuffer");
  c.out.put<std::uint64_t>(size);
}

void write_buffer(call& c, command& cmd) {
  auto buffer = get_mem(c);
  auto blocking = c.in.get<std::uint8_t>() != 0;
  auto offset = c.in.get<std::uint64_t>();
  auto bytes = c.in.get_bytes();
  check_buffer_span(buffer, offset, bytes.size(), "the write");
  const std::size_t size = bytes.size();
  auto source = write_from(c, cmd.queue(), blocking, bytes, "clEnqueueWriteBuffer");
  cmd.finish_write(
      clEnqueueWriteBuffer(cmd.queue(), buffer, blocking ? CL_TRUE : CL_FALSE, offset, size,
                           source.from, cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueWriteBuffer", blocking, std::move(source.kept), std::move(source.charge));
}

void read_buffer_rect(call& c, command& cmd) {
  auto buffer = get_mem(c);
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  auto row_pitch = c.in.get<std::uint64_t>();
  auto slice_pitch = c.in.get<std::uint64_t>();
  check_buffer_rect(buffer, origin, region, row_pitch, slice_pitch, "the read's");
  auto size = region_bytes(region, 1);
  if (size > max_chunk) throw cl_failure{CL_INVALID_VALUE, "rect read over one chunk"};
  c.reply_data = read_landing(c, cmd.queue(), size, "clEnqueueReadBufferRect");
  triple host_origin{0, 0, 0};
  // Packed on the host side: the client scatters rows into its own pitches.
  cmd.finish_read(clEnqueueReadBufferRect(cmd.queue(), buffer, cmd.blocking_read(), origin.data(),
                                          host_origin.data(), region.data(), row_pitch, slice_pitch,
                                          region[0], region[0] * region[1], c.reply_data.data(),
                                          cmd.wait_count(), cmd.wait_list(), cmd.event()),
                  "clEnqueueReadBufferRect");
  c.out.put<std::uint64_t>(size);
}

void write_buffer_rect(call& c, command& cmd) {
  auto buffer = get_mem(c);
  auto blocking = c.in.get<std::uint8_t>() != 0;
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  auto row_pitch = c.in.get<std::uint64_t>();
  auto slice_pitch = c.in.get<std::uint64_t>();
  check_buffer_rect(buffer, origin, region, row_pitch, slice_pitch, "the write's");
  auto data = take_bytes(c);
  if (data.bytes.size() != region_bytes(region, 1)) {
    throw cl_failure{CL_INVALID_VALUE, "rect write with " + std::to_string(data.bytes.size()) +
                                           " bytes for its region"};
  }
  triple host_origin{0, 0, 0};
  auto held = hold_for_write(c, blocking, data, "clEnqueueWriteBufferRect");
  cmd.finish_write(
      clEnqueueWriteBufferRect(cmd.queue(), buffer, blocking ? CL_TRUE : CL_FALSE, origin.data(),
                               host_origin.data(), region.data(), row_pitch, slice_pitch, region[0],
                               region[0] * region[1], data.bytes.data(), cmd.wait_count(),
                               cmd.wait_list(), cmd.event()),
      "clEnqueueWriteBufferRect", blocking, std::move(data.owner), std::move(held));
}

void fill_buffer(call& c, command& cmd) {
  auto buffer = get_mem(c);
  auto pattern = c.in.get_bytes();
  auto offset = c.in.get<std::uint64_t>();
  auto size = c.in.get<std::uint64_t>();
  check_fill_pattern(pattern.size(), offset, size);
  check_buffer_span(buffer, offset, size, "the fill");
  cmd.finish(clEnqueueFillBuffer(cmd.queue(), buffer, pattern.data(), pattern.size(), offset, size,
                                 cmd.wait_count(), cmd.wait_list(), cmd.event()),
             "clEnqueueFillBuffer");
}

void copy_buffer(call& c, command& cmd) {
  auto source = get_mem(c);
  auto target = get_mem(c);
  auto source_offset = c.in.get<std::uint64_t>();
  auto target_offset = c.in.get<std::uint64_t>();
  auto size = c.in.get<std::uint64_t>();
  check_buffer_span(source, source_offset, size, "the copy's source");
  check_buffer_span(target, target_offset, size, "the copy's target");
  if (source == target) check_spans_apart(source_offset, target_offset, size);
  cmd.finish(clEnqueueCopyBuffer(cmd.queue(), source, target, source_offset, target_offset, size,
                                 cmd.wait_count(), cmd.wait_list(), cmd.event()),
             "clEnqueueCopyBuffer");
}

void copy_buffer_rect(call& c, command& cmd) {
  auto source = get_mem(c);
  auto target = get_mem(c);
  auto source_origin = get_triple(c.in);
  auto target_origin = get_triple(c.in);
  auto region = get_triple(c.in);
  std::array<std::size_t, 4> pitches{};
  for (auto& pitch : pitches) pitch = c.in.get<std::uint64_t>();
  check_buffer_rect(source, source_origin, region, pitches[0], pitches[1], "the copy's source");
  check_buffer_rect(target, target_origin, region, pitches[2], pitches[3], "the copy's target");
  if (source == target && rects_overlap(source_origin.data(), target_origin.data(), region.data(),
                                        pitches[0], pitches[1])) {
    throw cl_failure{CL_MEM_COPY_OVERLAP, "the copy's source and target rectangles overlap"};
  }
  cmd.finish(clEnqueueCopyBufferRect(cmd.queue(), source, target, source_origin.data(),
                                     target_origin.data(), region.data(), pitches[0], pitches[1],
                                     pitches[2], pitches[3], cmd.wait_count(), cmd.wait_list(),
                                     cmd.event()),
             "clEnqueueCopyBufferRect");
}

void read_image(call& c, command& cmd) {
  auto image = get_mem(c);
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  check_image_box(image, origin, region, "the read's");
  auto element = image_element_size(image);
  auto size = region_bytes(region, element);
  if (size > max_chunk) throw cl_failure{CL_INVALID_VALUE, "image read over one chunk"};
  c.reply_data = read_landing(c, cmd.queue(), size, "clEnqueueReadImage");
  cmd.finish_read(
      clEnqueueReadImage(cmd.queue(), image, cmd.blocking_read(), origin.data(), region.data(),
                         region[0] * element, image_slice_pitch(region, element),
                         c.reply_data.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueReadImage");
  c.out.put<std::uint64_t>(size);
}

void write_image(call& c, command& cmd) {
  auto image = get_mem(c);
  auto blocking = c.in.get<std::uint8_t>() != 0;
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  check_image_box(image, origin, region, "the write's");
  auto data = take_bytes(c);
  auto element = image_element_size(image);
  if (data.bytes.size() != region_bytes(region, element)) {
    throw cl_failure{CL_INVALID_VALUE, "image write with " + std::to_string(data.bytes.size()) +
                                           " bytes for its region"};
  }
  auto held = hold_for_write(c, blocking, data, "clEnqueueWriteImage");
  cmd.finish_write(
      clEnqueueWriteImage(cmd.queue(), image, blocking ? CL_TRUE : CL_FALSE, origin.data(),
                          region.data(), region[0] * element, image_slice_pitch(region, element),
                          data.bytes.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueWriteImage", blocking, std::move(data.owner), std::move(held));
}

void fill_image(call& c, command& cmd) {
  auto image = get_mem(c);
  auto color = c.in.get_bytes();
  if (color.size() != 16) throw cl_failure{CL_INVALID_VALUE, "fill colour is not 16 bytes"};
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  check_image_box(image, origin, region, "the fill's");
  cmd.finish(clEnqueueFillImage(cmd.queue(), image, color.data(), origin.data(), region.data(),
                                cmd.wait_count(), cmd.wait_list(), cmd.event()),
             "clEnqueueFillImage");
}

void copy_image(call& c, command& cmd) {
  auto source = get_mem(c);
  auto target = get_mem(c);
  auto source_origin = get_triple(c.in);
  auto target_origin = get_triple(c.in);
  auto region = get_triple(c.in);
  check_image_box(source, source_origin, region, "the copy's source");
  check_image_box(target, target_origin, region, "the copy's target");
  check_same_format(source, target);
  if (source == target &&
      boxes_overlap(source_origin.data(), target_origin.data(), region.data())) {
    throw cl_failure{CL_MEM_COPY_OVERLAP, "the copy's source and target regions overlap"};
  }
  cmd.finish(
      clEnqueueCopyImage(cmd.queue(), source, target, source_origin.data(), target_origin.data(),
                         region.data(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueCopyImage");
}

void copy_image_to_buffer(call& c, command& cmd) {
  auto source = get_mem(c);
  auto target = get_mem(c);
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  auto offset = c.in.get<std::uint64_t>();
  check_image_box(source, origin, region, "the copy's source");
  check_buffer_span(target, offset, region_bytes(region, image_element_size(source)),
                    "the copy's target");
  cmd.finish(clEnqueueCopyImageToBuffer(cmd.queue(), source, target, origin.data(), region.data(),
                                        offset, cmd.wait_count(), cmd.wait_list(), cmd.event()),
             "clEnqueueCopyImageToBuffer");
}

void copy_buffer_to_image(call& c, command& cmd) {
  auto source = get_mem(c);
  auto target = get_mem(c);
  auto offset = c.in.get<std::uint64_t>();
  auto origin = get_triple(c.in);
  auto region = get_triple(c.in);
  check_image_box(target, origin, region, "the copy's target");
  check_buffer_span(source, offset, region_bytes(region, image_element_size(target)),
                    "the copy's source");
  cmd.finish(
      clEnqueueCopyBufferToImage(cmd.queue(), source, target, offset, origin.data(), region.data(),
                                 cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueCopyBufferToImage");
}

}  // namespace handlers

}  // namespace troupe::remote::server
