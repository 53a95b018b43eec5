// The OpenCL device memory and pinned staging blocks kept for reuse (internal, so tested directly
// on the first OpenCL device: PoCL in CI). Whether a buffer is kept or released shows in its
// reference count: the tests hold one reference of their own.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "device/opencl/opencl_memory.hpp"
#include "device/opencl/opencl_pinned_allocator.hpp"
#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

cl_uint references(cl_mem buffer) {
  cl_uint count = 0;
  EXPECT_EQ(clGetMemObjectInfo(buffer, CL_MEM_REFERENCE_COUNT, sizeof count, &count, nullptr),
            CL_SUCCESS);
  return count;
}

class opencl_memory_test : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_platform_id platform = nullptr;
    cl_uint platforms = 0;
    if (clGetPlatformIDs(1, &platform, &platforms) != CL_SUCCESS || platforms == 0)
      GTEST_SKIP() << "no OpenCL platform";
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS)
      GTEST_SKIP() << "no OpenCL device";
    context = std::make_shared<opencl_context>();
    cl_int status = CL_SUCCESS;
    context->context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    context->device = device;
    context->name = "test device";
  }

  /// A pool keeping up to 4 KiB, in buffers of at most 1 KiB; allocations up to 1 MiB.
  std::unique_ptr<opencl_memory_cache> pool() const {
    return std::make_unique<opencl_memory_cache>(context, 4096, 1 << 20);
  }

  context_ptr context;
};

TEST_F(opencl_memory_test, a_buffer_given_back_is_handed_out_again_for_the_same_size) {
  auto memory = pool();
  cl_mem first = memory->allocate(1000);
  memory->give_back(first, 1000);
  cl_mem other_size = memory->allocate(999);
  EXPECT_NE(other_size, first);  // sizes match exactly
  cl_mem again = memory->allocate(1000);
  EXPECT_EQ(again, first);
  cl_mem second = memory->allocate(1000);
  EXPECT_NE(second, first);  // never handed out twice
  for (cl_mem buffer : {other_size, again, second}) clReleaseMemObject(buffer);
}

TEST_F(opencl_memory_test, buffers_too_large_to_keep_are_released_and_the_rest_at_the_end) {
  auto memory = pool();
  cl_mem large = memory->allocate(2000);  // over a quarter of the limit
  cl_mem small = memory->allocate(1000);
  clRetainMemObject(large);
  clRetainMemObject(small);
  memory->give_back(large, 2000);
  memory->give_back(small, 1000);
  EXPECT_EQ(references(large), 1u);  // only ours: released
  EXPECT_EQ(references(small), 2u);  // kept
  memory.reset();
  EXPECT_EQ(references(small), 1u);
  clReleaseMemObject(large);
  clReleaseMemObject(small);
}

TEST_F(opencl_memory_test, an_allocation_over_the_largest_is_refused_by_name) {
  auto memory = pool();
  try {
    memory->allocate((1 << 20) + 1);
    ADD_FAILURE() << "allocation over the largest did not fail";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::out_of_device_memory);
    const std::string what = e.what();
    EXPECT_NE(what.find("allocating 1048577 bytes on device 'test device'"), std::string::npos)
        << what;
    EXPECT_NE(what.find("more than its largest allocation, 1048576 bytes"), std::string::npos)
        << what;
  }
}

TEST_F(opencl_memory_test, a_device_out_of_memory_gets_the_kept_buffers_back) {
  auto memory = pool();
  cl_mem kept = memory->allocate(1000);
  clRetainMemObject(kept);
  memory->give_back(kept, 1000);
  EXPECT_NO_THROW(memory->check_enqueue(CL_SUCCESS, "clEnqueueNDRangeKernel"));
  // Another failure keeps them.
  EXPECT_THROW(memory->check_enqueue(CL_INVALID_VALUE, "clEnqueueNDRangeKernel"), error);
  EXPECT_EQ(references(kept), 2u);
  try {
    memory->check_enqueue(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clEnqueueNDRangeKernel");
    ADD_FAILURE() << "a failed enqueue did not throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::out_of_device_memory);
    EXPECT_NE(std::string{e.what()}.find("clEnqueueNDRangeKernel on device 'test device'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(references(kept), 1u);
  clReleaseMemObject(kept);
}

TEST_F(opencl_memory_test, staging_blocks_are_powers_of_two_up_to_64_mib_then_multiples_of_it) {
  opencl_staging staging{context};
  constexpr std::size_t mib = std::size_t{1} << 20;
  const std::pair<std::size_t, std::size_t> sizes[] = {{1, mib / 4},
                                                       {mib / 4 + 1, mib / 2},
                                                       {64 * mib, 64 * mib},
                                                       {64 * mib + 1, 128 * mib},
                                                       {130 * mib, 192 * mib}};
  for (const auto& [asked, lent] : sizes) {
    const opencl_staging_block block = staging.take(asked);
    EXPECT_EQ(block.bytes, lent) << asked << " bytes asked";
    auto* bytes = static_cast<unsigned char*>(block.data);
    bytes[0] = 1;  // mapped, writable to its end
    bytes[block.bytes - 1] = 2;
    staging.give_back(block);
  }
  // Kept: any size of the same class gets the block back.
  const opencl_staging_block first = staging.take(100 * mib);
  staging.give_back(first);
  const opencl_staging_block again = staging.take(120 * mib);
  EXPECT_EQ(again.mem, first.mem);
  staging.give_back(again);
}

TEST(opencl_errors, allocation_failures_are_out_of_device_memory) {
  // As a failed call's status, or as a command's status on its event.
  EXPECT_EQ(opencl_error_kind(CL_MEM_OBJECT_ALLOCATION_FAILURE), errc::out_of_device_memory);
  EXPECT_EQ(opencl_error_kind(CL_OUT_OF_HOST_MEMORY), errc::out_of_device_memory);
  EXPECT_EQ(opencl_error_kind(CL_INVALID_KERNEL_ARGS), errc::device_error);
  EXPECT_EQ(opencl_error_kind(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), errc::device_error);
}

}  // namespace
}  // namespace troupe::detail
