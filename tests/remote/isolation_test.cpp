// Isolation between sessions and from the server's host: new memory is zeroed, builds cannot
// read the server's files, forged image and sampler handles are refused, and one session's
// compiler unload does not reach another's builds.
#include <CL/cl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "isolation_environment.hpp"
#include "temp_directory.hpp"

namespace troupe::remote_test {
namespace {

class remote_isolation : public isolation_test {};

TEST_F(remote_isolation, new_buffers_and_images_never_show_what_another_session_freed) {
  constexpr int rounds = 8;
  for (std::size_t size : {std::size_t{256}, std::size_t{4096}, std::size_t{65536}}) {
    SCOPED_TRACE(size);
    std::vector<std::uint8_t> pattern(size, 0xa5);
    for (int round = 0; round < rounds; ++round) {
      {
        auto used = make_buffer(first.context, size);
        ASSERT_CL(clEnqueueWriteBuffer(first.queue, used, CL_TRUE, 0, size, pattern.data(), 0,
                                       nullptr, nullptr));
        ASSERT_CL(clFinish(first.queue));
      }
      for (int again = 0; again < 4; ++again) {
        auto fresh = make_buffer(second.context, size);
        std::vector<std::uint8_t> seen(size, 0xff);
        ASSERT_CL(clEnqueueReadBuffer(second.queue, fresh, CL_TRUE, 0, size, seen.data(), 0,
                                      nullptr, nullptr));
        ASSERT_EQ(std::count(seen.begin(), seen.end(), 0), static_cast<long>(size))
            << "round " << round << ": a new buffer shows bytes another session wrote";
      }
    }
  }
  // Images too: 64 x 64 RGBA8 pixels.
  const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = desc.image_height = 64;
  const std::size_t origin[3] = {0, 0, 0}, region[3] = {64, 64, 1}, bytes = 64 * 64 * 4;
  std::vector<std::uint8_t> pattern(bytes, 0x5a);
  for (int round = 0; round < rounds; ++round) {
    cl_int status = CL_SUCCESS;
    {
      mem_ref used(clCreateImage(first.context, 0, &format, &desc, nullptr, &status));
      ASSERT_CL(status);
      ASSERT_CL(clEnqueueWriteImage(first.queue, used, CL_TRUE, origin, region, 0, 0,
                                    pattern.data(), 0, nullptr, nullptr));
    }
    mem_ref fresh(clCreateImage(second.context, 0, &format, &desc, nullptr, &status));
    ASSERT_CL(status);
    std::vector<std::uint8_t> seen(bytes, 0xff);
    ASSERT_CL(clEnqueueReadImage(second.queue, fresh, CL_TRUE, origin, region, 0, 0, seen.data(), 0,
                                 nullptr, nullptr));
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 0), static_cast<long>(bytes))
        << "round " << round << ": a new image shows bytes another session wrote";
  }
}

}  // namespace
}  // namespace troupe::remote_test
