// Platforms, devices, contexts and queues of a remote PoCL, compared with the local PoCL.
#include <CL/cl_ext.h>
#include <CL/cl_gl.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "common_kernels.hpp"
#include "platforms.hpp"
#include "remote_environment.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"
#include "troupe/remote/cl_troupe_remote.h"

namespace troupe::remote_test {
namespace {

// Registered here, once for the binary: the servers must run before the first OpenCL call.
[[maybe_unused]] auto* const environment =
    ::testing::AddGlobalTestEnvironment(new remote_environment);

TEST(remote_platform, both_servers_are_listed_once_with_their_endpoints) {
  ASSERT_NE(local_platform(), nullptr)
      << "the local platform " << local_platform_name() << " is missing";
  const auto& env = remote_environment::get();
  std::vector<std::string> endpoints;
  for (auto platform : all_platforms()) {
    if (!is_troupe_platform(platform)) continue;
    std::string endpoint = info_string(clGetPlatformInfo, platform,
                                       (cl_platform_info)CL_PLATFORM_REMOTE_ENDPOINT_TROUPE);
    if (info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME).find(local_platform_name()) !=
        std::string::npos) {
      endpoints.push_back(endpoint);
    }
  }
  std::sort(endpoints.begin(), endpoints.end());
  std::vector<std::string> expected{env.plain_endpoint(), env.token_endpoint()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(endpoints, expected);
}

TEST_F(remote_test, platform_info_keeps_the_servers_name_and_caps_the_version) {
  const std::string endpoint = remote_environment::get().plain_endpoint();
  // Programs pick platforms by name: the name is the server's own, the place is asked apart.
  EXPECT_EQ(info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_NAME),
            info_string(clGetPlatformInfo, local.platform, CL_PLATFORM_NAME));
  EXPECT_EQ(info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_ICD_SUFFIX_KHR), "troupe");
  EXPECT_EQ(info_string(clGetPlatformInfo, remote.platform,
                        (cl_platform_info)CL_PLATFORM_REMOTE_ENDPOINT_TROUPE),
            endpoint);
  EXPECT_EQ(info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_VENDOR),
            info_string(clGetPlatformInfo, local.platform, CL_PLATFORM_VENDOR));
  EXPECT_EQ(info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_PROFILE),
            info_string(clGetPlatformInfo, local.platform, CL_PLATFORM_PROFILE));
  const auto version = info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_VERSION);
  EXPECT_EQ(version.rfind("OpenCL 1.", 0), 0u) << version;
  if (version.rfind("OpenCL 1.", 0) == 0) {
    EXPECT_LE(version[9] - '0', 2) << version;
  }
  const auto extensions = info_string(clGetPlatformInfo, remote.platform, CL_PLATFORM_EXTENSIONS);
  EXPECT_NE(extensions.find("cl_khr_icd"), std::string::npos) << extensions;
  EXPECT_NE(extensions.find("cl_troupe_remote"), std::string::npos) << extensions;
  // Other vendors do not know the endpoint query.
  std::size_t size = 0;
  EXPECT_EQ(
      clGetPlatformInfo(local.platform, CL_PLATFORM_REMOTE_ENDPOINT_TROUPE, 0, nullptr, &size),
      CL_INVALID_VALUE);
}

TEST_F(remote_test, device_info_matches_the_local_device) {
  EXPECT_EQ(info_string(clGetDeviceInfo, remote.device, CL_DEVICE_NAME),
            info_string(clGetDeviceInfo, local.device, CL_DEVICE_NAME));
  EXPECT_EQ(info_string(clGetDeviceInfo, remote.device, CL_DEVICE_VENDOR),
            info_string(clGetDeviceInfo, local.device, CL_DEVICE_VENDOR));
  EXPECT_EQ(info<cl_platform_id>(clGetDeviceInfo, remote.device, CL_DEVICE_PLATFORM),
            remote.platform);
  EXPECT_EQ(info<cl_device_type>(clGetDeviceInfo, remote.device, CL_DEVICE_TYPE),
            info<cl_device_type>(clGetDeviceInfo, local.device, CL_DEVICE_TYPE));
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, remote.device, CL_DEVICE_MAX_COMPUTE_UNITS),
            info<cl_uint>(clGetDeviceInfo, local.device, CL_DEVICE_MAX_COMPUTE_UNITS));
  EXPECT_EQ(info<cl_ulong>(clGetDeviceInfo, remote.device, CL_DEVICE_GLOBAL_MEM_SIZE),
            info<cl_ulong>(clGetDeviceInfo, local.device, CL_DEVICE_GLOBAL_MEM_SIZE));
  EXPECT_EQ(info<std::size_t>(clGetDeviceInfo, remote.device, CL_DEVICE_MAX_WORK_GROUP_SIZE),
            info<std::size_t>(clGetDeviceInfo, local.device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  EXPECT_EQ(info_bytes(clGetDeviceInfo, remote.device, CL_DEVICE_MAX_WORK_ITEM_SIZES),
            info_bytes(clGetDeviceInfo, local.device, CL_DEVICE_MAX_WORK_ITEM_SIZES));
  EXPECT_EQ(info<cl_bool>(clGetDeviceInfo, remote.device, CL_DEVICE_IMAGE_SUPPORT),
            info<cl_bool>(clGetDeviceInfo, local.device, CL_DEVICE_IMAGE_SUPPORT));
  const auto version = info_string(clGetDeviceInfo, remote.device, CL_DEVICE_VERSION);
  EXPECT_TRUE(version.rfind("OpenCL 1.2", 0) == 0 || version.rfind("OpenCL 1.1", 0) == 0 ||
              version.rfind("OpenCL 1.0", 0) == 0)
      << version;
  const auto c_version = info_string(clGetDeviceInfo, remote.device, CL_DEVICE_OPENCL_C_VERSION);
  EXPECT_EQ(c_version.rfind("OpenCL C 1.", 0), 0u) << c_version;
  // Native kernels are host function pointers: never offered remotely.
  EXPECT_EQ(info<cl_device_exec_capabilities>(clGetDeviceInfo, remote.device,
                                              CL_DEVICE_EXECUTION_CAPABILITIES) &
                CL_EXEC_NATIVE_KERNEL,
            0u);
  cl_uint local_count = 0, remote_count = 0;
  ASSERT_CL(clGetDeviceIDs(local.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &local_count));
  ASSERT_CL(clGetDeviceIDs(remote.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &remote_count));
  EXPECT_EQ(remote_count, local_count);
  // The same device handle every time it is listed.
  EXPECT_EQ(first_device(remote.platform), remote.device);
  EXPECT_EQ(info<cl_uint>(clGetDeviceInfo, remote.device, CL_DEVICE_REFERENCE_COUNT), 1u);
}

TEST_F(remote_test, context_info_and_reference_counts) {
  EXPECT_EQ(info<cl_uint>(clGetContextInfo, remote.context.get(), CL_CONTEXT_NUM_DEVICES), 1u);
  EXPECT_EQ(info<cl_device_id>(clGetContextInfo, remote.context.get(), CL_CONTEXT_DEVICES),
            remote.device);
  // The fixture's queue holds the context too, locally as well as remotely.
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto count = [&] {
      return info<cl_uint>(clGetContextInfo, s->context.get(), CL_CONTEXT_REFERENCE_COUNT);
    };
    const cl_uint held = count();
    EXPECT_GE(held, 1u);
    ASSERT_CL(clRetainContext(s->context));
    EXPECT_EQ(count(), held + 1);
    ASSERT_CL(clReleaseContext(s->context));
    EXPECT_EQ(count(), held);
    s->queue.reset();
    // Whether a queue's hold shows in the count is the driver's choice (PoCL: yes, NVIDIA: no);
    // the ICD counts it.
    if (s == &remote) {
      EXPECT_EQ(count(), held - 1);
    }
  }

  // Properties come back as given; a context from a type finds the device too.
  cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(remote.platform), 0};
  cl_int status = CL_SUCCESS;
  context_ref typed(
      clCreateContextFromType(properties, CL_DEVICE_TYPE_ALL, nullptr, nullptr, &status));
  ASSERT_CL(status);
  auto returned = info_bytes(clGetContextInfo, typed.get(), CL_CONTEXT_PROPERTIES);
  ASSERT_EQ(returned.size(), sizeof properties);
  EXPECT_EQ(std::memcmp(returned.data(), properties, sizeof properties), 0);
  EXPECT_EQ(info<cl_device_id>(clGetContextInfo, typed.get(), CL_CONTEXT_DEVICES), remote.device);
}

TEST_F(remote_test, queue_info_and_reference_counts) {
  cl_int status = CL_SUCCESS;
  queue_ref profiled(
      clCreateCommandQueue(remote.context, remote.device, CL_QUEUE_PROFILING_ENABLE, &status));
  ASSERT_CL(status);
  EXPECT_EQ(info<cl_context>(clGetCommandQueueInfo, profiled.get(), CL_QUEUE_CONTEXT),
            remote.context.get());
  EXPECT_EQ(info<cl_device_id>(clGetCommandQueueInfo, profiled.get(), CL_QUEUE_DEVICE),
            remote.device);
  EXPECT_EQ(
      info<cl_command_queue_properties>(clGetCommandQueueInfo, profiled.get(), CL_QUEUE_PROPERTIES),
      static_cast<cl_command_queue_properties>(CL_QUEUE_PROFILING_ENABLE));
  EXPECT_EQ(info<cl_uint>(clGetCommandQueueInfo, profiled.get(), CL_QUEUE_REFERENCE_COUNT), 1u);
  ASSERT_CL(clRetainCommandQueue(profiled));
  EXPECT_EQ(info<cl_uint>(clGetCommandQueueInfo, profiled.get(), CL_QUEUE_REFERENCE_COUNT), 2u);
  ASSERT_CL(clReleaseCommandQueue(profiled));
  EXPECT_EQ(info<cl_uint>(clGetCommandQueueInfo, profiled.get(), CL_QUEUE_REFERENCE_COUNT), 1u);
  // A queue keeps its context alive: the context can be released first.
  ASSERT_CL(clFinish(profiled));
}

TEST_F(remote_test, a_context_cannot_span_two_servers) {
  cl_device_id token_device =
      first_device(remote_platform(remote_environment::get().token_endpoint()));
  ASSERT_NE(token_device, nullptr);
  cl_device_id both[] = {remote.device, token_device};
  cl_int status = CL_SUCCESS;
  context_ref spanning(clCreateContext(nullptr, 2, both, nullptr, nullptr, &status));
  EXPECT_EQ(status, CL_INVALID_DEVICE) << cl_error_name(status);
  EXPECT_EQ(spanning.get(), nullptr);
}

TEST_F(remote_test, native_kernels_and_gl_sharing_are_refused) {
  auto native = [](void*) {};
  EXPECT_EQ(clEnqueueNativeKernel(remote.queue, native, nullptr, 0, 0, nullptr, nullptr, 0, nullptr,
                                  nullptr),
            CL_INVALID_OPERATION);
  cl_int status = CL_SUCCESS;
  cl_mem shared = clCreateFromGLBuffer(remote.context, CL_MEM_READ_WRITE, 1, &status);
  EXPECT_EQ(shared, nullptr);
  EXPECT_EQ(status, CL_INVALID_OPERATION) << cl_error_name(status);
  // The queue still works afterwards.
  EXPECT_CL(clFinish(remote.queue));
}

TEST_F(remote_test, memory_object_info_matches_the_local_buffer) {
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto buffer = make_buffer(s->context, 4096, CL_MEM_READ_ONLY);
    EXPECT_EQ(info<std::size_t>(clGetMemObjectInfo, buffer.get(), CL_MEM_SIZE), 4096u);
    EXPECT_EQ(info<cl_mem_flags>(clGetMemObjectInfo, buffer.get(), CL_MEM_FLAGS),
              static_cast<cl_mem_flags>(CL_MEM_READ_ONLY));
    EXPECT_EQ(info<cl_mem_object_type>(clGetMemObjectInfo, buffer.get(), CL_MEM_TYPE),
              static_cast<cl_mem_object_type>(CL_MEM_OBJECT_BUFFER));
    EXPECT_EQ(info<cl_context>(clGetMemObjectInfo, buffer.get(), CL_MEM_CONTEXT), s->context.get());
    EXPECT_EQ(info<cl_uint>(clGetMemObjectInfo, buffer.get(), CL_MEM_REFERENCE_COUNT), 1u);
    EXPECT_EQ(info<cl_uint>(clGetMemObjectInfo, buffer.get(), CL_MEM_MAP_COUNT), 0u);
  }
}

TEST_F(remote_test, objects_keep_what_they_were_made_from) {
  // OpenCL: a queue, buffer or program holds its context, and a kernel its program, so an
  // application may release those first and still ask for them.
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    cl_int status = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &s->device, nullptr, nullptr, &status);
    ASSERT_CL(status);
    queue_ref queue(clCreateCommandQueue(context, s->device, 0, &status));
    ASSERT_CL(status);
    auto buffer = make_buffer(context, 64);
    const char* source = common_kernels;
    cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &status);
    ASSERT_CL(status);
    ASSERT_CL(clBuildProgram(program, 1, &s->device, "", nullptr, nullptr));
    auto kernel = make_kernel(program, "increment");
    ASSERT_CL(clReleaseProgram(program));
    ASSERT_CL(clReleaseContext(context));

    EXPECT_EQ(info<cl_program>(clGetKernelInfo, kernel.get(), CL_KERNEL_PROGRAM), program);
    EXPECT_EQ(info<cl_context>(clGetKernelInfo, kernel.get(), CL_KERNEL_CONTEXT), context);
    EXPECT_EQ(info<cl_context>(clGetCommandQueueInfo, queue.get(), CL_QUEUE_CONTEXT), context);
    EXPECT_EQ(info<cl_context>(clGetMemObjectInfo, buffer.get(), CL_MEM_CONTEXT), context);
    EXPECT_EQ(info<cl_uint>(clGetContextInfo, context, CL_CONTEXT_NUM_DEVICES), 1u);
    EXPECT_EQ(info<cl_context>(clGetProgramInfo, program, CL_PROGRAM_CONTEXT), context);
    EXPECT_EQ(info<cl_uint>(clGetProgramInfo, program, CL_PROGRAM_NUM_DEVICES), 1u);
    // And everything still works.
    ASSERT_CL(set_arg(kernel, 0, buffer.get()));
    ASSERT_CL(set_arg(kernel, 1, cl_int{2}));
    const std::size_t count = 16;
    ASSERT_CL(
        clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &count, nullptr, 0, nullptr, nullptr));
    std::vector<cl_int> back(count, -1);
    ASSERT_CL(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, 64, back.data(), 0, nullptr, nullptr));
    ASSERT_CL(clFinish(queue));
  }
}

}  // namespace
}  // namespace troupe::remote_test
