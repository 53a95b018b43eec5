// The server checks the spans, rectangles and image regions a client names itself: a hostile
// client does not go through the driver's checks, and PoCL 3.1 computes sizes that wrap around
// and then copies past the object (the fuzzer found reads and writes past 64- and 128-byte
// objects that way). Spoken by hand (raw_connection.hpp).
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "clients.hpp"
#include "raw_connection.hpp"

namespace troupe::remote_test {
namespace {

using remote::opcode;
using remote::writer;

constexpr std::uint64_t context = 1, queue = 2, source = 3, target = 4, image = 5;
constexpr std::size_t buffer_size = 64;

using triple = std::array<std::uint64_t, 3>;

// An open session's request connection, with a queue, two 64-byte buffers (`source` holds
// 0, 1, ..., 63 and `target` zeros) and a 4 x 4 RGBA image of 8-bit channels.
class remote_server_checks : public ::testing::Test {
 protected:
  void SetUp() override {
    server = serve();
    session.emplace(open_session(server->port()));
    requests.emplace(server->port());
    ASSERT_EQ(attach(*requests, *session)->status, CL_SUCCESS);
    auto platforms = ask(opcode::get_platforms, writer{});
    ASSERT_EQ(platforms.status, CL_SUCCESS) << platforms.message;
    writer device_query;
    device_query.put<std::uint64_t>(ids_of(platforms).at(0)).put<std::uint64_t>(CL_DEVICE_TYPE_ALL);
    auto devices = ask(opcode::get_device_ids, device_query);
    ASSERT_EQ(devices.status, CL_SUCCESS) << devices.message;
    const std::uint64_t device = ids_of(devices).at(0);
    writer make_context;
    make_context.put<std::uint64_t>(context)
        .put_bytes(nullptr, 0)
        .put_array<std::uint64_t>(std::span<const std::uint64_t>(&device, 1));
    ASSERT_EQ(ask(opcode::create_context, make_context).status, CL_SUCCESS);
    writer make_queue;
    make_queue.put<std::uint64_t>(queue)
        .put<std::uint64_t>(context)
        .put<std::uint64_t>(device)
        .put<std::uint64_t>(0);
    ASSERT_EQ(ask(opcode::create_queue, make_queue).status, CL_SUCCESS);
    for (std::size_t i = 0; i < buffer_size; ++i) counting[i] = static_cast<std::byte>(i);
    ASSERT_EQ(ask(opcode::create_buffer, buffer(source, counting)).status, CL_SUCCESS);
    ASSERT_EQ(ask(opcode::create_buffer, buffer(target, {})).status, CL_SUCCESS);
    auto made = ask(opcode::create_image, image_request(image, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE2D,
                                                        {4, 4, 0, 0, 0, 0}, {}));
    ASSERT_EQ(made.status, CL_SUCCESS) << made.message;
  }

  // A create_image of an RGBA image of `data_type` channels: `type`, then width, height,
  // depth, array size, row and slice pitch, on no buffer, with `contents`.
  static writer image_request(std::uint64_t id, cl_channel_type data_type, cl_mem_object_type type,
                              const std::array<std::uint64_t, 6>& desc,
                              std::span<const std::byte> contents) {
    writer payload;
    payload.put<std::uint64_t>(id).put<std::uint64_t>(context);
    payload.put<std::uint64_t>(CL_MEM_READ_WRITE);
    payload.put<std::uint32_t>(CL_RGBA).put<std::uint32_t>(data_type).put<std::uint32_t>(type);
    for (std::uint64_t field : desc) payload.put<std::uint64_t>(field);
    payload.put<std::uint64_t>(0);  // no buffer
    payload.put_bytes(contents.data(), contents.size());
    return payload;
  }

  raw_reply ask(opcode op, const writer& payload) {
    return request(*requests, op, ++sequence, payload);
  }

  static writer buffer(std::uint64_t id, std::span<const std::byte> contents) {
    writer payload;
    payload.put<std::uint64_t>(id).put<std::uint64_t>(context);
    payload.put<std::uint64_t>(CL_MEM_READ_WRITE | (contents.empty() ? 0 : CL_MEM_COPY_HOST_PTR));
    payload.put<std::uint64_t>(buffer_size).put_bytes(contents.data(), contents.size());
    return payload;
  }

  // The fields every enqueue starts with: the queue, no wait list, no event.
  static writer command() {
    writer payload;
    payload.put<std::uint64_t>(queue).put_array<std::uint64_t>({}).put<std::uint64_t>(0);
    return payload;
  }

  static void put(writer& payload, const triple& values) {
    for (auto value : values) payload.put<std::uint64_t>(value);
  }

  raw_reply copy_rect(std::uint64_t from, std::uint64_t to, const triple& from_origin,
                      const triple& to_origin, const triple& region,
                      const std::array<std::uint64_t, 4>& pitches) {
    writer payload = command();
    payload.put<std::uint64_t>(from).put<std::uint64_t>(to);
    put(payload, from_origin);
    put(payload, to_origin);
    put(payload, region);
    for (auto pitch : pitches) payload.put<std::uint64_t>(pitch);
    return ask(opcode::copy_buffer_rect, payload);
  }

  // Once the queue is done with what was enqueued, `target` still holds only zeros.
  void expect_target_untouched() {
    writer finish;
    finish.put<std::uint64_t>(queue);
    ASSERT_EQ(ask(opcode::finish, finish).status, CL_SUCCESS);
    EXPECT_EQ(contents(target), std::vector<std::byte>(buffer_size));
  }

  // The whole of `id`, read back; empty if the read failed.
  std::vector<std::byte> contents(std::uint64_t id) {
    writer payload = command();
    payload.put<std::uint64_t>(id).put<std::uint64_t>(0).put<std::uint64_t>(buffer_size);
    auto reply = ask(opcode::read_buffer, payload);
    if (reply.status != CL_SUCCESS || reply.payload.size() != reply.fields_at + 8 + buffer_size) {
      ADD_FAILURE() << "read back: " << reply.status << " " << reply.message;
      return {};
    }
    return {reply.payload.begin() + static_cast<std::ptrdiff_t>(reply.fields_at + 8),
            reply.payload.end()};
  }

  std::unique_ptr<remote::server::device_server> server;
  std::optional<raw_session> session;
  std::optional<raw_connection> requests;
  std::uint32_t sequence = 0;
  std::array<std::byte, buffer_size> counting{};
};

TEST_F(remote_server_checks, rectangles_past_their_buffer_are_refused_and_nothing_is_copied) {
  // Rows of 8 bytes, slices of 64: the buffer is one slice of 8 rows.
  auto past_source = copy_rect(source, target, {0, 7, 0}, {0, 0, 0}, {8, 2, 1}, {8, 64, 8, 64});
  EXPECT_EQ(past_source.status, CL_INVALID_VALUE) << past_source.message;
  auto past_target = copy_rect(source, target, {0, 0, 0}, {0, 0, 1}, {8, 2, 1}, {8, 16, 8, 64});
  EXPECT_EQ(past_target.status, CL_INVALID_VALUE) << past_target.message;
  // The fuzzer's: 2^59 + 1 slices of 64 bytes, whose size wraps around to 64 bytes.
  auto wrapping = copy_rect(source, target, {0, 0, 0}, {0, 1, 0},
                            {4, 2, (std::uint64_t{1} << 59) + 1}, {8, 64, 8, 64});
  EXPECT_EQ(wrapping.status, CL_INVALID_VALUE) << wrapping.message;
  auto overflowing =
      copy_rect(source, target, {UINT64_MAX - 3, 0, 0}, {0, 0, 0}, {8, 1, 1}, {0, 0, 0, 0});
  EXPECT_EQ(overflowing.status, CL_INVALID_VALUE) << overflowing.message;
  auto onto_itself = copy_rect(source, source, {0, 0, 0}, {2, 0, 0}, {4, 2, 1}, {8, 16, 8, 16});
  EXPECT_EQ(onto_itself.status, CL_MEM_COPY_OVERLAP) << onto_itself.message;

  writer read = command();
  read.put<std::uint64_t>(source);
  put(read, {60, 0, 0});
  put(read, {8, 1, 1});
  read.put<std::uint64_t>(0).put<std::uint64_t>(0);
  auto past_read = ask(opcode::read_buffer_rect, read);
  EXPECT_EQ(past_read.status, CL_INVALID_VALUE) << past_read.message;

  writer write = command();
  write.put<std::uint64_t>(target).put<std::uint8_t>(1);
  put(write, {0, 0, 0});
  put(write, {4, 2, 1});
  write.put<std::uint64_t>(64).put<std::uint64_t>(0);
  const std::array<std::byte, 8> sevens{std::byte{7}, std::byte{7}, std::byte{7}, std::byte{7},
                                        std::byte{7}, std::byte{7}, std::byte{7}, std::byte{7}};
  write.put_bytes(sevens.data(), sevens.size());
  auto past_write = ask(opcode::write_buffer_rect, write);
  EXPECT_EQ(past_write.status, CL_INVALID_VALUE) << past_write.message;

  // Nothing was copied or written; a rectangle inside both buffers is.
  expect_target_untouched();
  auto inside = copy_rect(source, target, {1, 6, 0}, {0, 0, 0}, {7, 2, 1}, {8, 64, 8, 64});
  ASSERT_EQ(inside.status, CL_SUCCESS) << inside.message;
  std::vector<std::byte> expected(buffer_size);
  for (std::size_t row = 0; row < 2; ++row) {
    for (std::size_t x = 0; x < 7; ++x) expected[row * 8 + x] = counting[(6 + row) * 8 + 1 + x];
  }
  EXPECT_EQ(contents(target), expected);
}

TEST_F(remote_server_checks, spans_and_image_regions_whose_size_wraps_around_are_refused) {
  const std::uint64_t near_the_end = ~std::uint64_t{0} - 7;  // + 16 wraps around to 8
  writer fill = command();
  const std::byte one{1};
  fill.put<std::uint64_t>(target).put_bytes(&one, 1);
  fill.put<std::uint64_t>(near_the_end).put<std::uint64_t>(16);
  auto filled = ask(opcode::fill_buffer, fill);
  EXPECT_EQ(filled.status, CL_INVALID_VALUE) << filled.message;
  writer copy = command();
  copy.put<std::uint64_t>(source).put<std::uint64_t>(target);
  copy.put<std::uint64_t>(near_the_end).put<std::uint64_t>(0).put<std::uint64_t>(16);
  auto copied = ask(opcode::copy_buffer, copy);
  EXPECT_EQ(copied.status, CL_INVALID_VALUE) << copied.message;
  writer onto_itself = command();
  onto_itself.put<std::uint64_t>(source).put<std::uint64_t>(source);
  onto_itself.put<std::uint64_t>(0).put<std::uint64_t>(8).put<std::uint64_t>(16);
  auto overlapping = ask(opcode::copy_buffer, onto_itself);
  EXPECT_EQ(overlapping.status, CL_MEM_COPY_OVERLAP) << overlapping.message;

  // The fuzzer's: 2 x 2 x (2^63 + 1) pixels of 4 bytes, 16 bytes once the size wraps around.
  const triple wrapping{2, 2, (std::uint64_t{1} << 63) + 1};
  writer to_buffer = command();
  to_buffer.put<std::uint64_t>(image).put<std::uint64_t>(target);
  put(to_buffer, {0, 0, 0});
  put(to_buffer, wrapping);
  to_buffer.put<std::uint64_t>(0);
  auto out_of_image = ask(opcode::copy_image_to_buffer, to_buffer);
  EXPECT_EQ(out_of_image.status, CL_INVALID_VALUE) << out_of_image.message;
  writer from_buffer = command();
  from_buffer.put<std::uint64_t>(source).put<std::uint64_t>(image).put<std::uint64_t>(0);
  put(from_buffer, {0, 0, 0});
  put(from_buffer, wrapping);
  auto into_image = ask(opcode::copy_buffer_to_image, from_buffer);
  EXPECT_EQ(into_image.status, CL_INVALID_VALUE) << into_image.message;
  writer read = command();
  read.put<std::uint64_t>(image);
  put(read, {std::uint64_t{1} << 62, 0, 0});
  put(read, {4, 4, 1});
  auto far_read = ask(opcode::read_image, read);
  EXPECT_EQ(far_read.status, CL_INVALID_VALUE) << far_read.message;

  // Nothing reached the target; a region inside the image does.
  expect_target_untouched();
  writer inside = command();
  inside.put<std::uint64_t>(source).put<std::uint64_t>(image).put<std::uint64_t>(0);
  put(inside, {0, 0, 0});
  put(inside, {4, 4, 1});
  ASSERT_EQ(ask(opcode::copy_buffer_to_image, inside).status, CL_SUCCESS);
  writer back = command();
  back.put<std::uint64_t>(image).put<std::uint64_t>(target);
  put(back, {0, 0, 0});
  put(back, {4, 4, 1});
  back.put<std::uint64_t>(0);
  ASSERT_EQ(ask(opcode::copy_image_to_buffer, back).status, CL_SUCCESS);
  EXPECT_EQ(contents(target), std::vector<std::byte>(counting.begin(), counting.end()));
}

TEST_F(remote_server_checks, sub_buffers_fill_patterns_and_image_formats_are_checked) {
  // A sub-buffer whose origin and size wrap around would pass every later check of a span
  // (128 is aligned for the devices tested; 128 + 2^64 - 64 wraps around to 64).
  for (auto [origin, size] : {std::pair<std::uint64_t, std::uint64_t>{128, ~std::uint64_t{0} - 63},
                              {~std::uint64_t{0} - 127, 128},
                              {0, 65}}) {
    writer make_sub;
    make_sub.put<std::uint64_t>(30).put<std::uint64_t>(source);
    make_sub.put<std::uint64_t>(CL_MEM_READ_WRITE)
        .put<std::uint64_t>(origin)
        .put<std::uint64_t>(size);
    auto made = ask(opcode::create_sub_buffer, make_sub);
    EXPECT_EQ(made.status, CL_INVALID_VALUE) << origin << " + " << size << ": " << made.message;
  }
  // Patterns of 1, 2, 4, ..., 128 bytes, filling whole patterns.
  for (auto [pattern, offset, size] :
       {std::tuple<std::size_t, std::uint64_t, std::uint64_t>{3, 0, 48}, {4, 2, 16}, {4, 0, 18}}) {
    const std::vector<std::byte> bytes(pattern, std::byte{1});
    writer fill = command();
    fill.put<std::uint64_t>(target).put_bytes(bytes.data(), bytes.size());
    fill.put<std::uint64_t>(offset).put<std::uint64_t>(size);
    auto filled = ask(opcode::fill_buffer, fill);
    EXPECT_EQ(filled.status, CL_INVALID_VALUE)
        << pattern << "-byte pattern at " << offset << " for " << size << ": " << filled.message;
  }
  // A copy between images moves pixels: one format on both sides.
  ASSERT_EQ(ask(opcode::create_image,
                image_request(image + 1, CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, {4, 4, 0, 0, 0, 0}, {}))
                .status,
            CL_SUCCESS);
  writer copy = command();
  copy.put<std::uint64_t>(image).put<std::uint64_t>(image + 1);
  put(copy, {0, 0, 0});
  put(copy, {0, 0, 0});
  put(copy, {2, 2, 1});
  auto copied = ask(opcode::copy_image, copy);
  EXPECT_EQ(copied.status, CL_IMAGE_FORMAT_MISMATCH) << copied.message;
  expect_target_untouched();
}

TEST_F(remote_server_checks, image_contents_shorter_than_their_pitches_are_refused) {
  // The fuzzer's: a 1D image of 4 pixels with a 16 KiB row pitch and 64 bytes of contents, of
  // which PoCL read 16 KiB. Then the same with contents that cover the pitch.
  for (std::size_t given : {std::size_t{64}, std::size_t{16384}}) {
    const std::vector<std::byte> contents(given, std::byte{9});
    auto made =
        ask(opcode::create_image, image_request(image + 2, CL_UNORM_INT8, CL_MEM_OBJECT_IMAGE1D,
                                                {4, 0, 0, 0, 16384, 0}, contents));
    if (given < 16384) {
      EXPECT_EQ(made.status, CL_INVALID_VALUE) << made.message;
    } else {
      EXPECT_EQ(made.status, CL_SUCCESS) << made.message;
    }
  }
}

}  // namespace
}  // namespace troupe::remote_test
