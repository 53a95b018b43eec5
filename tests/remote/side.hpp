#pragma once

// One side of a comparison between the local platform and the same one through troupe-deviced.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <string>

#include "cl_checks.hpp"
#include "cl_ref.hpp"
#include "platforms.hpp"

namespace troupe::remote_test {

/// One side of a comparison: a platform's first device with a context and a queue on it.
struct side {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  context_ref context;
  queue_ref queue;
  std::string name;
};

/// Opens a side on `platform`: its first device, a context and a queue.
inline void open_side(side& s, cl_platform_id platform, const std::string& name,
                      cl_command_queue_properties properties = 0) {
  s.name = name;
  s.platform = platform;
  ASSERT_NE(platform, nullptr) << "no platform for " << name;
  s.device = first_device(platform);
  ASSERT_NE(s.device, nullptr) << "no device on " << name;
  cl_int status = CL_SUCCESS;
  s.context.reset(clCreateContext(nullptr, 1, &s.device, nullptr, nullptr, &status));
  ASSERT_CL(status);
  s.queue.reset(clCreateCommandQueue(s.context, s.device, properties, &status));
  ASSERT_CL(status);
}

}  // namespace troupe::remote_test
