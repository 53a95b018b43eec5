// Threads sharing a remote context, objects handed between threads (each thread has its own
// connection to the server), and programs that use two servers or a local and a remote device.
#include <algorithm>
#include <atomic>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "common_kernels.hpp"
#include "platforms.hpp"
#include "remote_environment.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

class remote_concurrency : public remote_test {
 protected:
  void SetUp() override {
    remote_test::SetUp();
    if (HasFatalFailure()) return;
    program = build_program(remote, common_kernels);
    ASSERT_NE(program.get(), nullptr);
  }
  program_ref program;
};

TEST_F(remote_concurrency, four_threads_with_their_own_queues) {
  constexpr int threads = 4, rounds = 30;
  constexpr std::size_t count = 1 << 15;
  std::atomic<int> wrong{0}, failed{0};
  auto work = [&](int thread) {
    cl_int status = CL_SUCCESS;
    queue_ref queue(clCreateCommandQueue(remote.context, remote.device, 0, &status));
    kernel_ref increment(clCreateKernel(program, "increment", &status));
    mem_ref buffer(clCreateBuffer(remote.context, CL_MEM_READ_WRITE, count * 4, nullptr, &status));
    if (status != CL_SUCCESS) {
      ++failed;
      return;
    }
    std::vector<cl_int> data(count), back(count);
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < count; ++i) {
        data[i] = static_cast<cl_int>(i) * (thread + 1) + round;
      }
      const cl_int by = thread * 1000 + round;
      cl_mem target = buffer;
      if (clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, count * 4, data.data(), 0, nullptr,
                               nullptr) != CL_SUCCESS ||
          clSetKernelArg(increment, 0, sizeof target, &target) != CL_SUCCESS ||
          clSetKernelArg(increment, 1, sizeof by, &by) != CL_SUCCESS ||
          clEnqueueNDRangeKernel(queue, increment, 1, nullptr, &count, nullptr, 0, nullptr,
                                 nullptr) != CL_SUCCESS ||
          clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, count * 4, back.data(), 0, nullptr,
                              nullptr) != CL_SUCCESS) {
        ++failed;
        return;
      }
      for (std::size_t i = 0; i < count; ++i) {
        if (back[i] != data[i] + by) {
          ++wrong;
          break;
        }
      }
    }
  };
  within(240s, "four threads", [&] {
    std::vector<std::thread> running;
    for (int thread = 0; thread < threads; ++thread) running.emplace_back(work, thread);
    for (auto& thread : running) thread.join();
    return 0;
  });
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(remote_concurrency, an_event_made_on_one_thread_is_used_on_another) {
  // Thread A enqueues a large write and a kernel (both pipelined, on A's connection) and hands
  // the kernel's event to thread B at once; B names it in its own commands on B's connection.
  // The server must not see B's frames before A's: the ICD fences them.
  constexpr std::size_t count = 4 << 20;  // 16 MB: the server is still reading it
  std::vector<cl_int> data(count);
  std::iota(data.begin(), data.end(), 0);
  cl_int status = CL_SUCCESS;
  queue_ref other(clCreateCommandQueue(remote.context, remote.device, 0, &status));
  ASSERT_CL(status);
  auto increment = make_kernel(program, "increment");
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(round);
    auto buffer = make_buffer(remote.context, count * 4);
    std::promise<cl_event> handed;
    auto used = std::async(std::launch::async, [&, future = handed.get_future()]() mutable {
      cl_event launched = future.get();
      // The wait names nothing but the event, so only the event can order it after A's frames.
      cl_int waited = clWaitForEvents(1, &launched);
      std::vector<cl_int> back(count);
      cl_int read = clEnqueueReadBuffer(other, buffer, CL_TRUE, 0, count * 4, back.data(), 1,
                                        &launched, nullptr);
      clReleaseEvent(launched);
      bool right = true;
      for (std::size_t i = 0; i < count && right; ++i) right = back[i] == data[i] + round;
      return std::make_tuple(read, waited, right);
    });
    cl_event launched = nullptr;
    ASSERT_CL(clEnqueueWriteBuffer(remote.queue, buffer, CL_FALSE, 0, count * 4, data.data(), 0,
                                   nullptr, nullptr));
    ASSERT_CL(set_arg(increment, 0, buffer.get()));
    ASSERT_CL(set_arg(increment, 1, cl_int{round}));
    ASSERT_CL(clEnqueueNDRangeKernel(remote.queue, increment, 1, nullptr, &count, nullptr, 0,
                                     nullptr, &launched));
    handed.set_value(launched);
    auto [read, waited, right] = within(120s, "the other thread", [&] { return used.get(); });
    EXPECT_EQ(read, CL_SUCCESS) << cl_error_name(read);
    EXPECT_EQ(waited, CL_SUCCESS) << cl_error_name(waited);
    EXPECT_TRUE(right);
    ASSERT_CL(clFinish(remote.queue));
  }
}

TEST_F(remote_concurrency, a_buffer_made_on_one_thread_is_released_on_another) {
  // Created and filled (pipelined) on a second thread, used and released on this one.
  auto made = std::async(std::launch::async, [&] {
    cl_int status = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(remote.context, CL_MEM_READ_WRITE, 4096, nullptr, &status);
    const cl_int pattern = 77;
    if (status == CL_SUCCESS) {
      status = clEnqueueFillBuffer(remote.queue, buffer, &pattern, sizeof pattern, 0, 4096, 0,
                                   nullptr, nullptr);
    }
    return std::make_pair(buffer, status);
  });
  auto [buffer, status] = made.get();
  ASSERT_CL(status);
  mem_ref owned(buffer);
  auto increment = make_kernel(program, "increment");
  ASSERT_CL(set_arg(increment, 0, owned.get()));
  ASSERT_CL(set_arg(increment, 1, cl_int{1}));
  const std::size_t count = 1024;
  ASSERT_CL(clEnqueueNDRangeKernel(remote.queue, increment, 1, nullptr, &count, nullptr, 0, nullptr,
                                   nullptr));
  std::vector<cl_int> back(count);
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, owned, CL_TRUE, 0, count * 4, back.data(), 0, nullptr,
                                nullptr));
  EXPECT_EQ(back, std::vector<cl_int>(count, 78));
}

TEST_F(remote_concurrency, one_program_splits_a_vector_add_over_a_local_and_a_remote_device) {
  constexpr std::size_t count = 1 << 20, half = count / 2;
  std::vector<float> a(count), b(count), c(count, -1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i % 1000);
    b[i] = static_cast<float>(i / 1000);
  }
  auto local_program = build_program(local, common_kernels);
  struct part {
    side* s;
    cl_program program;
    std::size_t first;
    mem_ref a, b, c;
    kernel_ref add;
    event_ref read;
  };
  part parts[2] = {{&local, local_program, 0, {}, {}, {}, {}, {}},
                   {&remote, program, half, {}, {}, {}, {}, {}}};
  for (auto& p : parts) {
    p.a = make_buffer(p.s->context, half * 4, CL_MEM_COPY_HOST_PTR, a.data() + p.first);
    p.b = make_buffer(p.s->context, half * 4, CL_MEM_COPY_HOST_PTR, b.data() + p.first);
    p.c = make_buffer(p.s->context, half * 4);
    p.add = make_kernel(p.program, "add");
    ASSERT_CL(set_arg(p.add, 0, p.a.get()));
    ASSERT_CL(set_arg(p.add, 1, p.b.get()));
    ASSERT_CL(set_arg(p.add, 2, p.c.get()));
  }
  // Both halves in flight before either is waited for.
  for (auto& p : parts) {
    ASSERT_CL(
        clEnqueueNDRangeKernel(p.s->queue, p.add, 1, nullptr, &half, nullptr, 0, nullptr, nullptr));
    ASSERT_CL(clFlush(p.s->queue));
  }
  for (auto& p : parts) {
    ASSERT_CL(clEnqueueReadBuffer(p.s->queue, p.c, CL_FALSE, 0, half * 4, c.data() + p.first, 0,
                                  nullptr, p.read.out()));
  }
  cl_event reads[] = {parts[0].read, parts[1].read};
  ASSERT_CL(clWaitForEvents(1, &reads[0]));
  ASSERT_CL(clWaitForEvents(1, &reads[1]));
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_F(remote_concurrency, copies_between_buffers_of_two_servers) {
  // troupe's extension: the bytes pass through this host, in both directions.
  side token;
  open_side(token, remote_platform(remote_environment::get().token_endpoint()), "token server");
  ASSERT_NE(token.device, nullptr);
  const std::size_t size = 3 << 20;
  std::vector<unsigned char> first(size), second(size);
  for (std::size_t i = 0; i < size; ++i) {
    first[i] = static_cast<unsigned char>(i * 7);
    second[i] = static_cast<unsigned char>(i * 13 + 1);
  }
  auto here = make_buffer(remote.context, size, CL_MEM_COPY_HOST_PTR, first.data());
  auto there = make_buffer(token.context, size, CL_MEM_COPY_HOST_PTR, second.data());
  auto expected_there = second, expected_here = first;
  std::copy_n(first.begin() + 1000, 1 << 20, expected_there.begin() + 5000);
  std::copy_n(expected_there.begin() + 77, 4096, expected_here.begin() + 300);

  // Source on the queue's server, then source on the other server.
  event_ref copied, copied_back;
  ASSERT_CL(clEnqueueCopyBuffer(remote.queue, here, there, 1000, 5000, 1 << 20, 0, nullptr,
                                copied.out()));
  ASSERT_CL(clEnqueueCopyBuffer(remote.queue, there, here, 77, 300, 4096, 1, copied.ptr(),
                                copied_back.out()));
  // One wait for events of two servers.
  event_ref marker;
  ASSERT_CL(clEnqueueMarkerWithWaitList(token.queue, 0, nullptr, marker.out()));
  cl_event both[] = {copied_back, marker};
  ASSERT_CL(within(60s, "clWaitForEvents", [&] { return clWaitForEvents(2, both); }));
  std::vector<unsigned char> back(size);
  ASSERT_CL(
      clEnqueueReadBuffer(token.queue, there, CL_TRUE, 0, size, back.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(back == expected_there);
  // A wait list with an event of the other server.
  ASSERT_CL(clEnqueueReadBuffer(remote.queue, here, CL_TRUE, 0, size, back.data(), 1, marker.ptr(),
                                nullptr));
  EXPECT_TRUE(back == expected_here);
}

TEST_F(remote_concurrency, a_kernel_of_another_server_is_refused_cleanly) {
  side token;
  open_side(token, remote_platform(remote_environment::get().token_endpoint()), "token server");
  auto other_program = build_program(token, common_kernels);
  auto other_kernel = make_kernel(other_program, "increment");
  auto buffer = make_buffer(token.context, 64);
  ASSERT_CL(set_arg(other_kernel, 0, buffer.get()));
  ASSERT_CL(set_arg(other_kernel, 1, cl_int{1}));
  const std::size_t count = 16;
  cl_event event = nullptr;
  // OpenCL: a kernel and a queue of different contexts.
  EXPECT_EQ(clEnqueueNDRangeKernel(remote.queue, other_kernel, 1, nullptr, &count, nullptr, 0,
                                   nullptr, &event),
            CL_INVALID_CONTEXT);
  EXPECT_EQ(event, nullptr);
  // Nothing of the refused launch reaches either server, so nothing fails later.
  EXPECT_CL(clFinish(remote.queue));
  EXPECT_CL(clFinish(token.queue));
}

TEST_F(remote_concurrency, a_buffer_of_another_server_is_refused_on_a_queue) {
  // Ids count per server: the other server's buffer has the id of one of this server's, which
  // must not be written instead.
  side token;
  open_side(token, remote_platform(remote_environment::get().token_endpoint()), "token server");
  std::vector<cl_int> zeros(16, 0), fives(16, 5), back(16, -1);
  std::vector<mem_ref> here, there;
  for (int i = 0; i < 4; ++i) {
    here.push_back(make_buffer(remote.context, 64, CL_MEM_COPY_HOST_PTR, zeros.data()));
    there.push_back(make_buffer(token.context, 64, CL_MEM_COPY_HOST_PTR, zeros.data()));
  }
  for (auto& buffer : there) {
    cl_event event = nullptr;
    EXPECT_EQ(clEnqueueWriteBuffer(remote.queue, buffer, CL_TRUE, 0, 64, fives.data(), 0, nullptr,
                                   &event),
              CL_INVALID_CONTEXT);
    EXPECT_EQ(event, nullptr);
    EXPECT_EQ(
        clEnqueueFillBuffer(remote.queue, buffer, fives.data(), 4, 0, 64, 0, nullptr, nullptr),
        CL_INVALID_CONTEXT);
    EXPECT_EQ(
        clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, 64, back.data(), 0, nullptr, nullptr),
        CL_INVALID_CONTEXT);
  }
  EXPECT_CL(clFinish(remote.queue));  // nothing failed later either
  for (auto& buffer : here) {
    ASSERT_CL(clEnqueueReadBuffer(remote.queue, buffer, CL_TRUE, 0, 64, back.data(), 0, nullptr,
                                  nullptr));
    EXPECT_EQ(back, zeros);
  }
}

}  // namespace
}  // namespace troupe::remote_test
