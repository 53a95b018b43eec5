#pragma once

// Wrong calls through the driver, against OpenCL's error and the local device's.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <string>

#include "cl_checks.hpp"

namespace troupe::remote_test {

/// Checks what a wrong call returned through the driver (`through`): OpenCL's error
/// `expected`, and the local device's (`native`) where that refuses the call too; a device may
/// let some calls past (PoCL does), and NVIDIA's and PoCL's differ there.
inline void expect_refused(cl_int through, cl_int native, cl_int expected) {
  EXPECT_EQ(std::string(cl_error_name(through)), cl_error_name(expected));
  if (native != CL_SUCCESS) {
    EXPECT_EQ(std::string(cl_error_name(through)), cl_error_name(native))
        << "the local device refuses it otherwise";
  }
}

}  // namespace troupe::remote_test
