// Proof, against a troupe-deviced process and client processes that reach it through
// libtroupe-icd.so (issue 36): many clients at once make no errors, clients killed mid-transfer
// leave no memory behind in the server, and clients whose server is killed get errors instead
// of hanging. Each test prints its figures ("figures: ...").
#include <gtest/gtest.h>

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "clients.hpp"
#include "deviced_process.hpp"
#include "proc_files.hpp"
#include "sanitized_build.hpp"
#include "time_limits.hpp"

namespace troupe::remote_test {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The first line of `helper` that starts with `prefix`, within `limit`.
std::optional<std::string> answer(child_process& helper, const std::string& prefix,
                                  std::chrono::seconds limit) {
  return helper.wait_for_line(prefix, limit);
}

/// The OpenCL status in a helper's "error <code>" line.
int status_in(const std::string& line) {
  return std::stoi(line.substr(std::string("error ").size()));
}

TEST(remote_load_proof, sixty_four_clients_of_a_thousand_operations_make_no_errors) {
  auto server = start_deviced_logged();
  clients helpers;
  const std::string hosts = server.endpoint();
  constexpr int count = 64, operations = 1000;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<child_process>> running;
  for (int i = 0; i < count; ++i) {
    running.push_back(helpers.start(hosts, {"mixed-operations", std::to_string(operations)}));
  }
  int done = 0, operations_done = 0, errors = 0;
  for (auto& helper : running) {
    auto line = answer(*helper, "done ", 300s);
    if (!line) {
      ADD_FAILURE() << "a client gave no count; it wrote:\n" << helper->output();
      continue;
    }
    int ran = 0, failed = 0;
    std::sscanf(line->c_str(), "done %d %d", &ran, &failed);
    ++done;
    operations_done += ran;
    errors += failed;
    EXPECT_EQ(helper->wait(60s), 0) << helper->output();
  }
  std::printf(
      "figures: %d client processes, %d operations (create, write, launch, read, finish, "
      "release) checked against the host, %d errors, %.1f s wall\n",
      done, operations_done, errors, seconds_since(start));
  EXPECT_EQ(done, count);
  EXPECT_GE(operations_done, count * operations);
  EXPECT_EQ(errors, 0);
}

// Reads the server's log until `count` more sessions have closed; false after `limit`.
bool wait_for_closed_sessions(child_process& server, int count, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int closed = 0; closed < count;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    auto line = server.read_line(left);
    if (!line) return false;
    if (line->find(" closed; released ") != std::string::npos) ++closed;
  }
  return true;
}

// The server's thread count once it has not changed for a second (at most `limit`): what it
// runs idle after its first clients (the platform's own threads start on first use).
std::size_t settled_threads(pid_t server, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::size_t count = thread_count(server);
  auto since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline &&
         std::chrono::steady_clock::now() - since < 1s) {
    std::this_thread::sleep_for(50ms);
    if (std::size_t now = thread_count(server); now != count) {
      count = now;
      since = std::chrono::steady_clock::now();
    }
  }
  return count;
}

TEST(remote_load_proof, clients_killed_mid_transfer_leave_no_memory_behind) {
  // Info: the server logs each session it closes.
  auto server = start_deviced_logged({"--log-level", "info"});
  clients helpers;
  const pid_t pid = server.process->pid();
  std::size_t idle_threads = 0;  // known after the first clients
  // `count` clients, `at_once` at a time, each writing and reading 16 MiB in a loop until it
  // is killed (SIGKILL: no goodbye, frames cut anywhere).
  auto kill_clients = [&](int count, int at_once) {
    for (int started = 0; started < count; started += at_once) {
      std::vector<std::unique_ptr<child_process>> running;
      for (int i = 0; i < at_once; ++i) {
        running.push_back(helpers.start(server.endpoint(), {"transfer-forever", "16"}));
      }
      for (auto& helper : running) {
        ASSERT_TRUE(answer(*helper, "ready", 120s)) << helper->output() << "\nthe server wrote:\n"
                                                    << server.process->output_until_quiet(1s);
      }
      for (std::size_t i = 0; i < running.size(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(7 * i % 23));  // anywhere
        running[i]->kill(SIGKILL);
      }
      for (auto& helper : running) EXPECT_TRUE(helper->wait(30s));
      ASSERT_TRUE(wait_for_closed_sessions(*server.process, at_once, 60s))
          << "the server did not close the sessions of killed clients; it wrote:\n"
          << server.process->output();
    }
    if (idle_threads == 0) {
      idle_threads = settled_threads(pid, 60s);
      return;
    }
    // The server runs as many threads as idle again: its connections' threads are gone.
    ASSERT_TRUE(eventually(60s, [&] { return thread_count(pid) == idle_threads; }))
        << "the server still runs " << thread_count(pid) << " threads, " << idle_threads
        << " after the first clients had gone";
  };
  // The server hands freed memory back on its watchdog's ticks for a few seconds after clients
  // go (memory_return.hpp): its resident memory once it has, or after `limit`.
  auto settled_resident = [&](std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::uint64_t least = resident_bytes(pid);
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(250ms);
      least = std::min(least, resident_bytes(pid));
    }
    return least;
  };
  // The first clients load what the server keeps for good (PoCL's compiler and kernels, the
  // allocator's arenas, cached thread stacks): the baseline is taken after them.
  kill_clients(10, 10);
  if (::testing::Test::HasFatalFailure()) return;
  const std::uint64_t before = settled_resident(5s);
  const auto start = std::chrono::steady_clock::now();
  kill_clients(100, 10);
  if (::testing::Test::HasFatalFailure()) return;
  const double took = seconds_since(start);
  const std::uint64_t after = settled_resident(5s);
  const double growth = (static_cast<double>(after) - static_cast<double>(before)) / (1 << 20);
  std::printf(
      "figures: 100 clients killed mid-transfer (16 MiB writes and reads), 10 at a time, in "
      "%.1f s; server RSS %.1f MiB before, %.1f MiB after: growth %.2f MiB\n",
      took, static_cast<double>(before) / (1 << 20), static_cast<double>(after) / (1 << 20),
      growth);
  if (sanitized_build) {
    GTEST_SKIP() << "resident memory not checked: a sanitizer's allocator keeps what it frees "
                    "(the clients, their sessions and the server's threads were)";
  }
  EXPECT_LT(growth, 1.0) << "the server's resident memory grew over clients that are gone";
}

TEST(remote_load_proof, clients_whose_server_is_killed_get_errors) {
  auto server = start_deviced_logged();
  clients helpers;
  auto finishing = helpers.start(server.endpoint(), {"finish-forever"});
  auto idle = helpers.start(server.endpoint(), {"idle-then-call"});
  ASSERT_TRUE(answer(*finishing, "finishing", 120s)) << finishing->output();
  ASSERT_TRUE(answer(*idle, "ready", 120s)) << idle->output();
  const auto killed = std::chrono::steady_clock::now();
  server.process->kill(SIGKILL);
  ASSERT_TRUE(server.process->wait(30s));
  auto blocked_error = answer(*finishing, "error ", 30s);
  const double blocked_took = seconds_since(killed);
  idle->write_line("go");
  auto idle_error = answer(*idle, "error ", 30s);
  const double idle_took = seconds_since(killed);
  ASSERT_TRUE(blocked_error) << "the client in clFinish gave no error; it wrote:\n"
                             << finishing->output();
  ASSERT_TRUE(idle_error) << "the idle client's next call gave no error; it wrote:\n"
                          << idle->output();
  std::printf(
      "figures: server killed; the client blocked in clFinish got %d after %.3f s, the idle "
      "client's next call got %d after %.3f s\n",
      status_in(*blocked_error), blocked_took, status_in(*idle_error), idle_took);
  for (int status : {status_in(*blocked_error), status_in(*idle_error)}) {
    EXPECT_TRUE(status == CL_DEVICE_NOT_AVAILABLE || status == CL_OUT_OF_RESOURCES)
        << "expected CL_DEVICE_NOT_AVAILABLE (-2) or CL_OUT_OF_RESOURCES (-5), got " << status;
  }
  EXPECT_EQ(finishing->wait(30s), 0);
  EXPECT_EQ(idle->wait(30s), 0);
}

}  // namespace
}  // namespace troupe::remote_test
