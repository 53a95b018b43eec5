// The pinned buffers a session's reads land in and writes leave from
// (src/remote/server/pinned_staging.hpp), against the local platform: what is staged, what it
// costs the session's quota and when that comes back, and that a device read into one and a
// device write from one carry the bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cl_checks.hpp"
#include "platforms.hpp"
#include "remote/server/pinned_staging.hpp"
#include "remote/server/session.hpp"
#include "remote/server/session_quota.hpp"

namespace troupe::remote_test {
namespace server = troupe::remote::server;
namespace {

using server::pinned_staging;
using server::quota_resource;
using server::staging_lease;

constexpr std::size_t piece = pinned_staging::staging_buffer_size;

// A context and an in-order queue on the local platform's first device.
struct local_queue {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;

  local_queue() {
    cl_platform_id platform = local_platform();
    if (platform == nullptr) return;
    cl_device_id device = first_device(platform);
    cl_int status = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
    EXPECT_EQ(status, CL_SUCCESS);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    queue = clCreateCommandQueue(context, device, 0, &status);
#pragma GCC diagnostic pop
    EXPECT_EQ(status, CL_SUCCESS);
  }
  ~local_queue() {
    if (queue != nullptr) clReleaseCommandQueue(queue);
    if (context != nullptr) clReleaseContext(context);
  }
  local_queue(const local_queue&) = delete;
  local_queue& operator=(const local_queue&) = delete;
};

// A session's quota with `host_memory` bytes of host memory (0: no limit).
std::unique_ptr<server::session_quota> quota_of(std::uint64_t host_memory) {
  server::server_options options;
  options.session_host_memory = host_memory;
  return std::make_unique<server::session_quota>(1, options, [](const std::string&) {});
}

class pinned_staging_test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(local_platform(), nullptr)
        << "no local OpenCL platform named like '" << local_platform_name() << "'";
    ASSERT_NE(local.queue, nullptr);
  }
  local_queue local;
};

TEST_F(pinned_staging_test, small_and_oversized_reads_and_no_buffers_stay_in_plain_memory) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 16);
  EXPECT_FALSE(staging.lend(local.queue, pinned_staging::least_staged - 1));
  EXPECT_FALSE(staging.lend(local.queue, piece + 1));
  pinned_staging none(*quota, 0);
  EXPECT_FALSE(none.lend(local.queue, piece));
  EXPECT_EQ(quota->used(quota_resource::host_memory), 0u);
}

TEST_F(pinned_staging_test, a_buffer_is_zeroed_charged_once_and_reused) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 16);
  std::byte* first = nullptr;
  {
    staging_lease lease = staging.lend(local.queue, std::size_t{1} << 20);
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease.size(), std::size_t{1} << 20);
    EXPECT_TRUE(std::all_of(lease.data(), lease.data() + piece,
                            [](std::byte value) { return value == std::byte{0}; }));
    first = lease.data();
    EXPECT_EQ(quota->used(quota_resource::host_memory), piece);
  }
  // Back in the pool: still charged, and lent again rather than made anew.
  EXPECT_EQ(quota->used(quota_resource::host_memory), piece);
  staging_lease again = staging.lend(local.queue, piece);
  ASSERT_TRUE(again);
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(quota->used(quota_resource::host_memory), piece);
}

TEST_F(pinned_staging_test, a_pool_makes_at_most_its_bound_and_the_quota_is_respected) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 3);
  std::vector<staging_lease> lent;
  for (int index = 0; index < 3; ++index) {
    lent.push_back(staging.lend(local.queue, piece));
    ASSERT_TRUE(lent.back());
  }
  EXPECT_FALSE(staging.lend(local.queue, piece));  // the read then uses plain memory
  EXPECT_EQ(quota->used(quota_resource::host_memory), 3 * piece);

  auto small = quota_of(piece + piece / 2);
  pinned_staging bounded(*small, 16);
  staging_lease only = bounded.lend(local.queue, piece);
  ASSERT_TRUE(only);
  EXPECT_FALSE(bounded.lend(local.queue, piece));  // no room for a second
  EXPECT_EQ(small->used(quota_resource::host_memory), piece);
}

TEST_F(pinned_staging_test, a_released_context_or_a_closed_session_gives_its_buffers_back) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 16);
  staging_lease kept = staging.lend(local.queue, piece);
  { staging_lease returned = staging.lend(local.queue, piece); }
  ASSERT_TRUE(kept);
  EXPECT_EQ(quota->used(quota_resource::host_memory), 2 * piece);
  staging.forget(local.context);
  // The idle buffer is gone; the lent one stays until it comes back.
  EXPECT_EQ(quota->used(quota_resource::host_memory), piece);
  kept = staging_lease{};
  EXPECT_EQ(quota->used(quota_resource::host_memory), 0u);

  // A read after the forget makes a new pool; closing the session drops it.
  staging_lease late = staging.lend(local.queue, piece);
  ASSERT_TRUE(late);
  staging.clear();
  EXPECT_EQ(quota->used(quota_resource::host_memory), piece);
  late = staging_lease{};
  EXPECT_EQ(quota->used(quota_resource::host_memory), 0u);
  EXPECT_FALSE(staging.lend(local.queue, piece));  // closed
}

TEST_F(pinned_staging_test, a_moved_lease_leaves_nothing_behind_and_idle_buffers_can_go) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 16);
  staging_lease first = staging.lend(local.queue, piece);
  ASSERT_TRUE(first);
  staging_lease moved(std::move(first));
  EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move): what is left must be empty
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(first.size(), 0u);
  EXPECT_TRUE(moved);
  moved = staging_lease{};
  EXPECT_EQ(quota->used(quota_resource::host_memory), piece);  // idle, still kept
  staging.release_idle();
  EXPECT_EQ(quota->used(quota_resource::host_memory), 0u);
  EXPECT_TRUE(staging.lend(local.queue, piece));  // made anew
}

TEST_F(pinned_staging_test, a_transfer_short_of_quota_takes_the_room_of_idle_buffers) {
  server::server_options options;
  options.session_host_memory = piece + piece / 2;
  auto owner = std::make_shared<server::session>(1, std::array<std::uint64_t, 2>{}, nullptr,
                                                 options, [](const std::string&) {});
  { ASSERT_TRUE(owner->lend_pinned(local.queue, piece)); }  // made, then idle
  EXPECT_EQ(owner->quota().used(quota_resource::host_memory), piece);
  // A non-blocking write of 8 MiB needs the room the idle buffer holds.
  auto charge = owner->take_host_memory(piece, "a test's write");
  EXPECT_EQ(charge.amount(), piece);
  EXPECT_EQ(owner->quota().used(quota_resource::host_memory), piece);
  owner->clear();
}

TEST_F(pinned_staging_test, a_new_buffer_never_shows_what_an_earlier_one_held) {
  auto quota = quota_of(0);
  {
    pinned_staging earlier(*quota, 16);
    staging_lease lease = earlier.lend(local.queue, piece);
    ASSERT_TRUE(lease);
    std::fill(lease.data(), lease.data() + piece, std::byte{0xA5});
  }
  pinned_staging later(*quota, 16);
  staging_lease lease = later.lend(local.queue, piece);
  ASSERT_TRUE(lease);
  EXPECT_TRUE(std::all_of(lease.data(), lease.data() + piece,
                          [](std::byte value) { return value == std::byte{0}; }));
}

TEST_F(pinned_staging_test, a_device_read_into_a_lent_buffer_gives_the_device_bytes) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 16);
  std::vector<std::uint32_t> expected(piece / sizeof(std::uint32_t));
  std::iota(expected.begin(), expected.end(), 7u);
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(local.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, piece,
                                 expected.data(), &status);
  ASSERT_EQ(status, CL_SUCCESS);
  for (std::size_t size : {pinned_staging::least_staged, std::size_t{3} << 20, piece}) {
    staging_lease lease = staging.lend(local.queue, size);
    ASSERT_TRUE(lease);
    const std::size_t offset = piece - size;
    EXPECT_CL(clEnqueueReadBuffer(local.queue, buffer, CL_TRUE, offset, size, lease.data(), 0,
                                  nullptr, nullptr));
    EXPECT_EQ(std::memcmp(lease.data(),
                          reinterpret_cast<const std::byte*>(expected.data()) + offset, size),
              0)
        << size << " bytes at " << offset;
  }
  clReleaseMemObject(buffer);
}

TEST_F(pinned_staging_test, a_device_write_from_a_lent_buffer_gives_the_device_the_bytes) {
  auto quota = quota_of(0);
  pinned_staging staging(*quota, 16);
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(local.context, CL_MEM_READ_WRITE, piece, nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  for (std::size_t size : {pinned_staging::least_staged, std::size_t{3} << 20, piece}) {
    staging_lease lease = staging.lend(local.queue, size);
    ASSERT_TRUE(lease);
    std::vector<std::byte> expected(size);
    for (std::size_t i = 0; i < size; ++i) expected[i] = std::byte(i * 131 % 251);
    std::memcpy(lease.data(), expected.data(), size);
    const std::size_t offset = piece - size;
    EXPECT_CL(clEnqueueWriteBuffer(local.queue, buffer, CL_FALSE, offset, size, lease.data(), 0,
                                   nullptr, nullptr));
    EXPECT_CL(clFinish(local.queue));
    std::vector<std::byte> back(size);
    EXPECT_CL(clEnqueueReadBuffer(local.queue, buffer, CL_TRUE, offset, size, back.data(), 0,
                                  nullptr, nullptr));
    EXPECT_EQ(back, expected) << size << " bytes at " << offset;
  }
  clReleaseMemObject(buffer);
}

}  // namespace
}  // namespace troupe::remote_test
