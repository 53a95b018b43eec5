#pragma once

// Programs, kernels and buffers made in one call, whose failures fail the test.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "cl_checks.hpp"
#include "cl_ref.hpp"
#include "side.hpp"

namespace troupe::remote_test {

/// Builds `source` for the side's device; a failed build fails the test with its log.
inline program_ref build_program(const side& s, const std::string& source,
                                 const char* options = "") {
  const char* text = source.c_str();
  cl_int status = CL_SUCCESS;
  program_ref program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &status));
  EXPECT_EQ(status, CL_SUCCESS) << cl_error_name(status);
  if (status != CL_SUCCESS) return {};
  status = clBuildProgram(program, 1, &s.device, options, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::size_t size = 0;
    clGetProgramBuildInfo(program, s.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, s.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    while (!log.empty() && log.back() == '\0') log.pop_back();
    ADD_FAILURE() << "build on " << s.name << " failed: " << cl_error_name(status) << "\n" << log;
    return {};
  }
  return program;
}

inline kernel_ref make_kernel(cl_program program, const char* name) {
  cl_int status = CL_SUCCESS;
  kernel_ref kernel(clCreateKernel(program, name, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clCreateKernel(" << name << ") gave " << cl_error_name(status);
  return kernel;
}

inline mem_ref make_buffer(cl_context context, std::size_t size, cl_mem_flags flags = 0,
                           void* host = nullptr) {
  cl_int status = CL_SUCCESS;
  mem_ref buffer(clCreateBuffer(context, flags, size, host, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clCreateBuffer of " << size << " bytes gave "
                                << cl_error_name(status);
  return buffer;
}

template <class T>
cl_int set_arg(cl_kernel kernel, cl_uint index, const T& value) {
  return clSetKernelArg(kernel, index, sizeof(T), &value);
}

}  // namespace troupe::remote_test
