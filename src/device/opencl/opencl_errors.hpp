#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

namespace troupe::detail {

/// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES").
const char* opencl_error_name(cl_int code) noexcept;

/// Throws troupe::error for a failed OpenCL call: errc::out_of_device_memory for allocation
/// failures, errc::device_error otherwise; the message names the call, the device and the code.
void check_opencl(cl_int code, const char* call, const std::string& device);

}  // namespace troupe::detail
