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

TEST(remote_front_door, a_handshake_has_one_deadline_however_slowly_its_bytes_come) {
  server_options options;
  options.handshake_timeout = 500ms;
  auto server = serve(options);
  raw_connection slow(server->port());
  // A hello with a long token: at one byte per 100 ms it would take 30 s.
  const auto frame = raw_connection::encode(opcode::hello, remote::flag_reply, 0,
                                            hello_payload(std::string(300, 't')));
  std::size_t sent = 0;
  within(120s, "the slow handshake", [&] {
    // One byte, then 100 ms for the server to close the connection, and again.
    while (sent < frame.size() && !slow.closed_within(100ms)) {
      if (!slow.send(std::span(frame).subspan(sent, 1))) break;
      ++sent;
    }
    return 0;
  });
  EXPECT_GT(sent, 0u);
  EXPECT_LT(sent, frame.size()) << "the server took a handshake dribbled over " << frame.size() / 10
                                << " s under a 500 ms deadline";
  EXPECT_TRUE(slow.closed_within(20s));
}

TEST(remote_front_door, a_flood_of_silent_connections_holds_no_more_than_the_handshake_cap) {
  server_options options;
  options.max_handshakes = 8;
  options.handshake_timeout = 300s;  // only the cap closes connections here
  auto server = serve(options);
  std::vector<raw_connection> silent;
  for (int i = 0; i < 40; ++i) silent.emplace_back(server->port());
  // Each connection over the cap closes the one that has waited longest: 32 of them.
  auto count_closed = [&] {
    int closed = 0;
    for (auto& connection : silent) closed += connection.closed_within(0ms) ? 1 : 0;
    return closed;
  };
  EXPECT_TRUE(eventually(30s, [&] { return count_closed() >= 32; }))
      << count_closed() << " of 40 silent connections closed by a server that takes 8";
  EXPECT_EQ(count_closed(), 32);
  EXPECT_TRUE(eventually(30s, [&] { return server->connection_count() <= 8; }))
      << server->connection_count() << " connections held";
  // A client that speaks is served at once.
  EXPECT_NO_THROW(open_session(server->port()));
}

TEST(remote_front_door, wrong_tokens_from_one_address_slow_that_address_down) {
  server_options options;
  options.token = "right";
  auto server = serve(options);
  // Wrong tokens from 127.0.0.2: every one refused, and after a few, the address itself.
  int wrong = 0, slowed = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    raw_connection guess(server->port(), "127.0.0.2");
    auto reply = say_hello(guess, "guess " + std::to_string(attempt));
    ASSERT_TRUE(reply) << "attempt " << attempt << " closed without an answer";
    EXPECT_EQ(reply->status, CL_INVALID_OPERATION) << reply->message;
    if (reply->message.find("too many wrong tokens from 127.0.0.2") != std::string::npos) {
      ++slowed;
    } else if (reply->message == "wrong token") {
      ++wrong;
    }
  }
  EXPECT_GT(wrong, 0);
  EXPECT_GT(slowed, 0) << "8 wrong tokens in a row from one address, none slowed down";
  EXPECT_EQ(wrong + slowed, 8);
  // While slowed down, the address is refused even with the right token...
  {
    raw_connection right(server->port(), "127.0.0.2");
    auto reply = say_hello(right, "right");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, CL_INVALID_OPERATION);
    EXPECT_NE(reply->message.find("too many wrong tokens from 127.0.0.2"), std::string::npos)
        << reply->message;
  }
  // ...another address is not...
  EXPECT_NO_THROW(open_session(server->port(), "right", "127.0.0.3"));
  // ...and the address is let in again once its delay is over.
  EXPECT_TRUE(eventually(120s, [&] {
    raw_connection again(server->port(), "127.0.0.2");
    auto reply = say_hello(again, "right");
    return reply && reply->status == CL_SUCCESS;
  }));
}

}  // namespace
}  // namespace troupe::remote_test
