// Proof, against troupe-deviced as an administrator runs it (issue 36): the daemon raises its
// own limit on open files, outlives running out of them, holds no more than its handshake cap
// of 2000 silent connections and still serves a client, drops a slow-loris handshake at its
// deadline, and refuses every wrong token. Each test prints its figures ("figures: ...").
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <CL/cl.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "deviced_process.hpp"
#include "proc_files.hpp"
#include "raw_connection.hpp"
#include "temp_directory.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

using remote::opcode;
using remote::writer;

/// Lets this process open as many files as it may.
void raise_own_file_limit() {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

/// A client served: a session, a request connection and the platform list through it.
bool served(std::uint16_t port, const std::string& token = "",
            const std::string& source = "127.0.0.1") {
  try {
    auto session = open_session(port, token, source);
    raw_connection requests(port, source);
    auto welcome = attach(requests, session, token);
    if (!welcome || welcome->status != CL_SUCCESS) return false;
    auto platforms = request(requests, opcode::get_platforms, 1, writer{});
    return platforms.status == CL_SUCCESS && platforms.fields().get<std::uint64_t>() > 0;
  } catch (const std::exception& error) {
    std::printf("not served: %s\n", error.what());
    return false;
  }
}

int count_closed(std::vector<raw_connection>& connections) {
  int closed = 0;
  for (auto& connection : connections) closed += connection.closed_within(0ms) ? 1 : 0;
  return closed;
}

double mebibytes(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

TEST(remote_front_door_proof, the_daemon_raises_its_open_file_limit_to_the_hard_limit) {
  auto started = start_deviced_logged({}, "ulimit -Sn 256");
  auto limits = open_file_limits(started.process->pid());
  ASSERT_TRUE(limits);
  EXPECT_EQ(limits->first, limits->second)
      << "soft limit " << limits->first << ", hard limit " << limits->second;
}

TEST(remote_front_door_proof, running_out_of_file_descriptors_does_not_stop_the_daemon) {
#if defined(__SANITIZE_ADDRESS__)
  // UBSan, built in with ASan here, checks a caught exception's type through a pipe of its own:
  // in a daemon with no descriptor left it fails, and reports the object as invalid.
  GTEST_SKIP() << "UBSan's type check needs a file descriptor the test takes away";
#endif
  raise_own_file_limit();
  // 64 files in all, and a handshake cap above that: the daemon runs out of descriptors.
  auto started = start_deviced_logged({"--max-handshakes", "1000"}, "ulimit -n 64");
  std::vector<raw_connection> silent;
  for (int i = 0; i < 100; ++i) silent.emplace_back(started.port);
  auto complaint = started.process->wait_for_line("troupe-deviced: warn: cannot accept", 60s);
  ASSERT_TRUE(complaint) << "the daemon never reported running out of descriptors; it wrote:\n"
                         << started.process->output()
                         << (started.process->wait(0ms) ? "(and it has exited)" : "");
  silent.clear();
  EXPECT_TRUE(within(120s, "serving after running out",
                     [&] { return eventually(60s, [&] { return served(started.port); }); }));
  EXPECT_FALSE(started.process->wait(0ms)) << "the daemon exited";
}

TEST(remote_front_door_proof, two_thousand_silent_connections_then_a_client_is_served) {
  raise_own_file_limit();
  auto started = start_deviced_logged();
  const pid_t pid = started.process->pid();
  ASSERT_TRUE(served(started.port));
  const auto before = resident_bytes(pid);
  constexpr int count = 2000, cap = 64;  // troupe-deviced's default --max-handshakes
  std::vector<raw_connection> silent;
  for (int i = 0; i < count; ++i) silent.emplace_back(started.port);
  EXPECT_TRUE(eventually(60s, [&] { return count_closed(silent) >= count - cap; }))
      << count_closed(silent) << " of " << count << " closed";
  const int held = count - count_closed(silent);
  const bool served_meanwhile = within(120s, "a client", [&] { return served(started.port); });
  const auto after = resident_bytes(pid);
  std::printf(
      "figures: %d silent connections opened, %d held by the daemon; RSS %.1f MiB "
      "before, %.1f MiB after; a client served meanwhile: %s\n",
      count, held, mebibytes(before), mebibytes(after), served_meanwhile ? "yes" : "no");
  EXPECT_LE(held, cap);
  EXPECT_TRUE(served_meanwhile);
}

TEST(remote_front_door_proof, a_slow_loris_handshake_is_dropped_at_the_deadline) {
  auto started = start_deviced_logged({"--handshake-timeout-ms", "500"});
  raw_connection slow(started.port);
  const auto frame = raw_connection::encode(opcode::hello, remote::flag_reply, 0,
                                            hello_payload(std::string(300, 't')));
  std::size_t sent = 0;
  const auto begun = std::chrono::steady_clock::now();
  within(120s, "the slow loris", [&] {
    while (sent < frame.size() && !slow.closed_within(100ms)) {  // a byte every 100 ms
      if (!slow.send(std::span(frame).subspan(sent, 1))) break;
      ++sent;
    }
    return 0;
  });
  const bool dropped = slow.closed_within(20s);
  const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - begun);
  std::printf(
      "figures: slow loris sent %zu of %zu handshake bytes, one per 100 ms, under a "
      "500 ms deadline; dropped: %s, after %lld ms\n",
      sent, frame.size(), dropped ? "yes" : "no", static_cast<long long>(held.count()));
  EXPECT_TRUE(dropped);
  EXPECT_LT(sent, frame.size());
  EXPECT_TRUE(served(started.port));
}

TEST(remote_front_door_proof, a_wrong_token_is_always_refused) {
  temp_directory directory;
  const auto token_file = directory.path() / "token";
  std::FILE* file = std::fopen(token_file.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("the-right-token\n", file);
  std::fclose(file);
  auto started = start_deviced_logged({"--token-file", token_file.string()});
  constexpr int attempts = 50;
  int refused = 0, slowed = 0;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    raw_connection guess(started.port, "127.0.0.2");
    auto reply = say_hello(guess, "the-wrong-token-" + std::to_string(attempt));
    if (!reply || reply->status == CL_SUCCESS) continue;
    ++refused;
    if (reply->message.find("too many wrong tokens") != std::string::npos) ++slowed;
  }
  const bool right_elsewhere = served(started.port, "the-right-token", "127.0.0.3");
  std::printf(
      "figures: %d wrong tokens from 127.0.0.2, %d refused (%d of them as slowed "
      "down); the right token from 127.0.0.3 served: %s\n",
      attempts, refused, slowed, right_elsewhere ? "yes" : "no");
  EXPECT_EQ(refused, attempts);
  EXPECT_TRUE(right_elsewhere);
}

}  // namespace
}  // namespace troupe::remote_test
