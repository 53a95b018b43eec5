#pragma once

// Checks of OpenCL statuses that name the call and the error when they fail.
#include <CL/cl.h>

#include <gtest/gtest.h>
#include <string>

#include "device/opencl/opencl_errors.hpp"

namespace troupe::remote_test {

/// The name of an OpenCL status ("CL_INVALID_VALUE"): the device layer's table.
inline const char* cl_error_name(cl_int code) {
  return troupe::detail::opencl_error_name(code);
}

/// Asserts that an OpenCL call returned CL_SUCCESS, naming the call and the error.
#define ASSERT_CL(expr)                                                               \
  do {                                                                                \
    const cl_int troupe_status_ = (expr);                                             \
    ASSERT_EQ(troupe_status_, CL_SUCCESS)                                             \
        << #expr << " gave " << ::troupe::remote_test::cl_error_name(troupe_status_); \
  } while (0)
#define EXPECT_CL(expr)                                                               \
  do {                                                                                \
    const cl_int troupe_status_ = (expr);                                             \
    EXPECT_EQ(troupe_status_, CL_SUCCESS)                                             \
        << #expr << " gave " << ::troupe::remote_test::cl_error_name(troupe_status_); \
  } while (0)

/// In a check that reports rather than asserts (a function returning what went wrong, "" when
/// nothing did): returns "EXPR gave NAME" unless the call succeeded.
#define RETURN_CL_FAILURE(expr)                                                                  \
  do {                                                                                           \
    const cl_int troupe_status_ = (expr);                                                        \
    if (troupe_status_ != CL_SUCCESS)                                                            \
      return std::string(#expr " gave ") + ::troupe::remote_test::cl_error_name(troupe_status_); \
  } while (0)

}  // namespace troupe::remote_test
