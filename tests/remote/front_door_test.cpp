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

#include "clients.hpp"
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

TEST(remote_front_door, a_connection_that_gets_no_thread_is_closed_and_the_server_goes_on) {
  if (sanitized) GTEST_SKIP() << "a sanitizer's runtime needs address space the test takes away";
  auto server = serve();
  // Threads that end leave their stacks in glibc's cache, where the server's next thread would
  // find one without mapping memory: these hold every cached stack while the test runs.
  std::mutex mutex;
  std::condition_variable released;
  bool release = false;
  std::vector<std::thread> holders;
  for (int i = 0; i < 64; ++i) {
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

TEST(remote_front_door, an_idle_session_is_closed) {
  server_options options;
  options.idle_timeout = 1s;
  auto server = serve(options);
  auto session = open_session(server->port());
  raw_connection requests(server->port());
  auto welcome = attach(requests, session);
  ASSERT_TRUE(welcome && welcome->status == CL_SUCCESS);
  EXPECT_TRUE(session.anchor.closed_within(60s)) << "an idle session was not closed";
  EXPECT_TRUE(requests.closed_within(60s));
  EXPECT_TRUE(eventually(20s, [&] { return server->session_count() == 0; }));
}

TEST(remote_front_door, a_session_waiting_for_its_commands_is_not_idle) {
  server_options options;
  options.idle_timeout = 1s;
  auto server = serve(options);
  auto session = open_session(server->port());
  raw_connection waiter(server->port()), setter(server->port());
  ASSERT_EQ(attach(waiter, session)->status, CL_SUCCESS);
  ASSERT_EQ(attach(setter, session)->status, CL_SUCCESS);
  // A context and a user event, then a wait for it that lasts longer than the idle timeout.
  auto platforms = request(waiter, opcode::get_platforms, 1, writer{});
  ASSERT_EQ(platforms.status, CL_SUCCESS) << platforms.message;
  ASSERT_FALSE(ids_of(platforms).empty());
  writer device_query;
  device_query.put<std::uint64_t>(ids_of(platforms)[0]).put<std::uint64_t>(CL_DEVICE_TYPE_ALL);
  auto devices = request(waiter, opcode::get_device_ids, 2, device_query);
  ASSERT_EQ(devices.status, CL_SUCCESS) << devices.message;
  const std::uint64_t device = ids_of(devices).at(0), context = 1, event = 2;
  writer make_context;
  make_context.put<std::uint64_t>(context)
      .put_bytes(nullptr, 0)
      .put_array<std::uint64_t>(std::span<const std::uint64_t>(&device, 1));
  ASSERT_EQ(request(waiter, opcode::create_context, 3, make_context).status, CL_SUCCESS);
  writer make_event;
  make_event.put<std::uint64_t>(event).put<std::uint64_t>(context);
  ASSERT_EQ(request(waiter, opcode::create_user_event, 4, make_event).status, CL_SUCCESS);
  writer wait;
  wait.put_array<std::uint64_t>(std::span<const std::uint64_t>(&event, 1));
  ASSERT_TRUE(waiter.send_frame(opcode::wait_for_events, remote::flag_reply, 5, wait));
  EXPECT_FALSE(session.anchor.closed_within(3s))
      << "a session closed as idle while a request of it was still being served";
  writer complete;
  complete.put<std::uint64_t>(event).put<std::int32_t>(CL_COMPLETE);
  ASSERT_EQ(request(setter, opcode::set_user_event_status, 1, complete).status, CL_SUCCESS);
  auto waited = waiter.receive_reply(60s);
  ASSERT_TRUE(waited);
  EXPECT_EQ(waited->status, CL_SUCCESS) << waited->message;
  // Nothing left in progress: now it is idle.
  EXPECT_TRUE(session.anchor.closed_within(60s));
  EXPECT_TRUE(eventually(20s, [&] { return server->object_count() == 0; }));
}

TEST(remote_front_door, request_connections_per_session_are_capped) {
  server_options options;
  options.max_session_connections = 3;
  auto server = serve(options);
  auto session = open_session(server->port());
  std::vector<raw_connection> connections;
  for (int i = 0; i < 3; ++i) {
    connections.emplace_back(server->port());
    auto welcome = attach(connections.back(), session);
    ASSERT_TRUE(welcome);
    EXPECT_EQ(welcome->status, CL_SUCCESS) << welcome->message;
  }
  raw_connection one_more(server->port());
  auto refusal = attach(one_more, session);
  ASSERT_TRUE(refusal) << "the fourth connection was closed without an answer";
  EXPECT_EQ(refusal->status, CL_OUT_OF_RESOURCES);
  EXPECT_NE(refusal->message.find("maximum of 3 request connections"), std::string::npos)
      << refusal->message;
  EXPECT_TRUE(one_more.closed_within(20s));
  // A connection that goes makes room for another.
  connections.pop_back();
  EXPECT_TRUE(eventually(20s, [&] {
    raw_connection again(server->port());
    auto welcome = attach(again, session);
    return welcome && welcome->status == CL_SUCCESS;
  }));
}

TEST(remote_front_door, memory_follows_the_bytes_that_arrived) {
  if (sanitized) GTEST_SKIP() << "a sanitizer's shadow of the bytes is resident memory too";
  auto server = serve();
  auto session = open_session(server->port());
  constexpr int stalled = 8;
  constexpr std::uint32_t announced = 64u << 20, brought = 1u << 20;
  const auto before = resident_bytes();
  std::vector<raw_connection> connections;
  for (int i = 0; i < stalled; ++i) {
    connections.emplace_back(server->port());
    ASSERT_EQ(attach(connections.back(), session)->status, CL_SUCCESS);
    // A write that announces 64 MiB and brings 1 MiB of it.
    remote::frame_header header{announced, static_cast<std::uint16_t>(opcode::write_buffer), 0, 1,
                                0};
    std::vector<std::byte> bytes(sizeof header + brought);
    std::memcpy(bytes.data(), &header, sizeof header);
    ASSERT_TRUE(connections.back().send(bytes));
  }
  // Once the server has read every byte sent (none left in its sockets)...
  const auto server_port = server->port();
  ASSERT_TRUE(eventually(60s, [&] {
    for (auto& connection : connections) {
      if (unread_on_server(server_port, connection.local_port()).value_or(1) != 0) return false;
    }
    return true;
  }));
  // ...its memory has grown by what arrived, not by what was announced.
  const auto grown = resident_bytes() - std::min(before, resident_bytes());
  const std::uint64_t arrived = std::uint64_t{stalled} * brought;
  EXPECT_LT(grown, 2 * arrived + (32u << 20))
      << "the server's memory grew by " << (grown >> 20) << " MiB for " << (arrived >> 20)
      << " MiB that arrived (" << stalled << " frames announcing " << (announced >> 20)
      << " MiB each)";
}

}  // namespace
}  // namespace troupe::remote_test
