// Enqueued commands that move no bytes of their own: kernel launches, markers, barriers and
// migrations.
#include <string>
#include <vector>

#include "remote/server/handlers.hpp"

namespace troupe::remote::server {

namespace {

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

// Markers and barriers, once enqueued, are held until complete, even if registering the
// client's event id fails below (PoCL: see session::hold_until_complete).
void finish_synchronization(call& c, command& cmd, cl_int status, const char* what) {
  if (status == CL_SUCCESS) c.owner.hold_until_complete(*cmd.event());
  cmd.finish(status, what);
}

}  // namespace

namespace handlers {

void ndrange_kernel(call& c, command& cmd) {
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
}

void marker(call& c, command& cmd) {
  finish_synchronization(
      c, cmd,
      clEnqueueMarkerWithWaitList(cmd.queue(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueMarkerWithWaitList");
}

void barrier(call& c, command& cmd) {
  finish_synchronization(
      c, cmd,
      clEnqueueBarrierWithWaitList(cmd.queue(), cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueBarrierWithWaitList");
}

void migrate_mem_objects(call& c, command& cmd) {
  auto objects = c.objects<cl_mem>(object_kind::mem, CL_INVALID_MEM_OBJECT);
  auto flags = c.in.get<std::uint64_t>();
  cmd.finish(
      clEnqueueMigrateMemObjects(cmd.queue(), static_cast<cl_uint>(objects.size()), objects.data(),
                                 flags, cmd.wait_count(), cmd.wait_list(), cmd.event()),
      "clEnqueueMigrateMemObjects");
}

}  // namespace handlers

}  // namespace troupe::remote::server
