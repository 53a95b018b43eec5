// The server's front door against careless and hostile clients (issue 36): connections that
// cannot get a thread, handshakes that dribble, floods of connections that never speak, wrong
// tokens, idle sessions, too many connections per session, and frames that announce more bytes
// than they bring. The servers run in this process, so that their counts can be watched; the
// clients speak the protocol by hand (raw_connection.hpp).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <CL/cl.h>

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proc_files.hpp"
#include "raw_connection.hpp"
#include "time_limits.hpp"
#include "troupe/remote/device_server.hpp"

namespace troupe::remote_test {
namespace {

using remote::opcode;
using remote::writer;
using troupe::remote::server::device_server;
using troupe::remote::server::server_options;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

/// An in-process server on 127.0.0.1 and a free port, accepting in the background.
std::unique_ptr<device_server> serve(server_options options = {}) {
  options.address = "127.0.0.1";
  options.port = 0;
  auto server = std::make_unique<device_server>(options);
  server->start();
  return server;
}

TEST(remote_front_door, a_connection_that_gets_no_thread_is_closed_and_the_server_goes_on) {
  if (sanitized) GTEST_SKIP() << "a sanitizer's runtime needs address space the test takes away";
  auto server = serve();
  // Threads that end leave their stacks in glibc's cache, where the server's next thread would
  // find one without mapping memory: these hold every cached stack while the test runs.
  std::mutex mutex;
  std::condition_variable released;
  bool release = false;
  std::vector<std::thread> holders;
  for (int i = 0; i < 16; ++i) {
    holders.emplace_back([&] {
      std::unique_lock lock(mutex);
      released.wait(lock, [&] { return release; });
    });
  }
  // No room for another thread's stack: the server's next thread cannot be made.
  rlimit before{};
  ::getrlimit(RLIMIT_AS, &before);
  rlimit limited = before;
  limited.rlim_cur = address_space_bytes() + (256 << 10);
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &limited), 0) << std::strerror(errno);
  bool closed = false, answered = false;
  {
    raw_connection refused(server->port());
    answered = say_hello(refused, "", 30s).has_value();
    closed = refused.closed_within(30s);
  }
  ::setrlimit(RLIMIT_AS, &before);
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  released.notify_all();
  for (auto& holder : holders) holder.join();
  EXPECT_FALSE(answered) << "the connection was served: a thread was made after all";
  EXPECT_TRUE(closed) << "the connection without a thread was left open";
  // The server goes on.
  EXPECT_NO_THROW(open_session(server->port()));
}

}  // namespace
}  // namespace troupe::remote_test
