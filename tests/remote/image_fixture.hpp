#pragma once

// The image tests' fixture: a local and a served device, skipped where images are unsupported.
#include <CL/cl.h>

#include "cl_info.hpp"
#include "remote_fixture.hpp"

namespace troupe::remote_test {

class remote_image : public remote_test {
 protected:
  void SetUp() override {
    remote_test::SetUp();
    if (HasFatalFailure()) return;
    if (!info<cl_bool>(clGetDeviceInfo, remote.device, CL_DEVICE_IMAGE_SUPPORT)) {
      GTEST_SKIP() << "the remote device has no image support";
    }
  }
};

}  // namespace troupe::remote_test
