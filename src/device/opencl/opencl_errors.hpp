#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <string>

#include "troupe/async/error.hpp"

namespace troupe::detail {

/// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES").
const char* opencl_error_name(cl_int code) noexcept;

/// errc::out_of_device_memory for an allocation failure, errc::device_error otherwise.
errc opencl_error_kind(cl_int code) noexcept;

/// Throws troupe::error for a failed OpenCL call, of opencl_error_kind; the message names the
/// call, the device and the code.
void check_opencl(cl_int code, const char* call, const std::string& device);

}  // namespace troupe::detail
