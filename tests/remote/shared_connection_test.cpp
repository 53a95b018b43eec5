// More client threads than the server lets a session have request connections
// (--max-session-connections 2, see isolation_environment.hpp): a thread refused a connection
// of its own shares one of the session's, and every call of every thread is served.
#include <CL/cl.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "isolation_environment.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

class remote_shared_connection : public isolation_test {};

// Each thread builds its own variant (BY differs), so that builds run on shared connections
// too, not only launches and reads.
const char* const scale_source = R"(
__kernel void scale(__global int* x) {
  size_t i = get_global_id(0);
  x[i] = x[i] * BY + (int)i;
}
)";

// What a thread got wrong, in words; empty when every call succeeded and every value matched.
std::string scale_rounds(const side& s, int thread) {
  constexpr int rounds = 12;
  constexpr std::size_t count = 1024;
  const int by = thread + 2;
  const std::string options = "-DBY=" + std::to_string(by);
  const char* text = scale_source;
  cl_int status = CL_SUCCESS;
  program_ref program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &status));
  if (status != CL_SUCCESS)
    return std::string("clCreateProgramWithSource: ") + cl_error_name(status);
  status = clBuildProgram(program, 1, &s.device, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) return std::string("clBuildProgram: ") + cl_error_name(status);
  kernel_ref kernel(clCreateKernel(program, "scale", &status));
  if (status != CL_SUCCESS) return std::string("clCreateKernel: ") + cl_error_name(status);
  queue_ref queue(clCreateCommandQueue(s.context, s.device, 0, &status));
  if (status != CL_SUCCESS) return std::string("clCreateCommandQueue: ") + cl_error_name(status);
  mem_ref buffer(clCreateBuffer(s.context, 0, count * sizeof(cl_int), nullptr, &status));
  if (status != CL_SUCCESS) return std::string("clCreateBuffer: ") + cl_error_name(status);
  std::vector<cl_int> data(count), back(count);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<cl_int>(i) * 3 + round + thread;
    cl_mem target = buffer;
    if ((status = clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, count * sizeof(cl_int),
                                       data.data(), 0, nullptr, nullptr)) != CL_SUCCESS ||
        (status = clSetKernelArg(kernel, 0, sizeof target, &target)) != CL_SUCCESS ||
        (status = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &count, nullptr, 0, nullptr,
                                         nullptr)) != CL_SUCCESS ||
        (status = clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, count * sizeof(cl_int),
                                      back.data(), 0, nullptr, nullptr)) != CL_SUCCESS ||
        (status = clFinish(queue)) != CL_SUCCESS) {
      return "round " + std::to_string(round) + ": " + cl_error_name(status);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const cl_int expected = data[i] * by + static_cast<cl_int>(i);  // the CPU's answer
      if (back[i] != expected) {
        return "round " + std::to_string(round) + ": element " + std::to_string(i) + " is " +
               std::to_string(back[i]) + ", expected " + std::to_string(expected);
      }
    }
  }
  return {};
}

TEST_F(remote_shared_connection, threads_past_the_connection_limit_share_and_all_calls_succeed) {
  constexpr int threads = 8;
  std::vector<std::string> failures(threads);
  std::atomic<int> finished{0};
  within(300s, "eight threads on two connections", [&] {
    std::vector<std::thread> running;
    for (int thread = 0; thread < threads; ++thread) {
      running.emplace_back([&, thread] {
        failures[thread] = scale_rounds(first, thread);
        ++finished;
      });
    }
    for (auto& thread : running) thread.join();
    return 0;
  });
  ASSERT_EQ(finished.load(), threads);
  for (int thread = 0; thread < threads; ++thread) {
    EXPECT_EQ(failures[thread], "") << "thread " << thread;
  }
  // The session is whole afterwards: this thread's calls are served, on either platform.
  EXPECT_EQ(scale_rounds(first, threads), "");
  EXPECT_EQ(scale_rounds(second, threads), "");
}

}  // namespace
}  // namespace troupe::remote_test
