// Failures and limits: clients and servers that die, wrong tokens, full servers, and what a
// session holds on the server. Clients are client_helper processes; most servers run in this
// process, so that their session and object counts can be watched.
#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "child_process.hpp"
#include "cl_checks.hpp"
#include "clients.hpp"
#include "deviced_process.hpp"
#include "sanitized_build.hpp"
#include "temp_directory.hpp"
#include "time_limits.hpp"
#include "troupe/remote/device_server.hpp"

namespace troupe::remote_test {
namespace {

using troupe::remote::server::device_server;
using troupe::remote::server::server_options;

TEST(remote_failure, a_non_loopback_address_needs_a_token) {
  server_options open;
  open.address = "0.0.0.0";
  open.port = 0;
  EXPECT_THROW(device_server{open}, std::invalid_argument);
  server_options guarded = open;
  guarded.token = "a token";
  guarded.insecure = true;  // TLS off loopback is tls_test.cpp's
  EXPECT_NO_THROW(device_server{guarded});
  server_options none;
  none.port = 0;
  none.max_clients = 0;
  EXPECT_THROW(device_server{none}, std::invalid_argument);
}

TEST(remote_failure, a_crashing_server_says_where_and_dies_of_its_signal) {
  if (sanitized_build) GTEST_SKIP() << "under a sanitizer its own report replaces the server's";
  auto server = start_deviced_logged();
  // PoCL's LLVM puts a handler of its own in front, which on a fault puts the server's back and
  // lets the faulting instruction run again; a signal sent from outside has no instruction to
  // run again, so it may take a second one to reach the server's handler.
  std::optional<int> status;
  for (int sent = 0; sent < 3 && !status; ++sent) {
    server.process->kill(SIGSEGV);
    status = server.process->wait(2s);
  }
  ASSERT_EQ(status, 128 + SIGSEGV);
  const std::string& said = server.process->output_until_quiet(1s);
  EXPECT_NE(said.find("troupe-deviced: fatal signal Segmentation fault; stack"), std::string::npos)
      << said;
  EXPECT_NE(said.find("troupe-deviced("), std::string::npos) << "no frame of the server:\n" << said;
}

TEST(remote_failure, a_client_killed_mid_transfer_leaves_nothing_behind) {
  auto server = serve();
  clients helpers;
  ASSERT_EQ(server->session_count(), 0u);
  ASSERT_EQ(server->object_count(), 0u);
  auto transfer = helpers.start(endpoint(*server), {"transfer-forever"});
  ASSERT_TRUE(transfer->wait_for_line("ready", 120s)) << transfer->output();
  EXPECT_EQ(server->session_count(), 1u);
  EXPECT_GT(server->object_count(), 0u);
  transfer->kill(SIGKILL);
  ASSERT_TRUE(transfer->wait(20s));
  EXPECT_TRUE(eventually(20s, [&] { return server->session_count() == 0; }))
      << server->session_count() << " sessions left";
  EXPECT_TRUE(eventually(20s, [&] { return server->object_count() == 0; }))
      << server->object_count() << " objects left";
  // The server still serves.
  std::string output;
  EXPECT_EQ(helpers.run(endpoint(*server), {"check-loop", "3"}, &output), 0) << output;
}

// Starts a helper in `mode` (with `extra` variables) that works until a call fails, kills the
// server once it says "ready", and checks the helper reports the loss and exits.
void expect_server_loss_reported(const std::string& mode,
                                 const std::vector<std::string>& extra = {}) {
  auto deviced = start_deviced();
  clients helpers;
  auto runner = helpers.start(deviced.endpoint(), {mode}, extra);
  ASSERT_TRUE(runner->wait_for_line("ready", 120s)) << runner->output();
  deviced.process->kill(SIGKILL);
  auto error = runner->wait_for_line("error", 20s);
  ASSERT_TRUE(error) << "no error reported after the server died: " << runner->output();
  const int code = std::stoi(error->substr(6));
  EXPECT_TRUE(code == CL_DEVICE_NOT_AVAILABLE || code == CL_OUT_OF_RESOURCES)
      << *error << " (" << cl_error_name(code) << ")";
  auto exit_code = runner->wait(20s);
  ASSERT_TRUE(exit_code) << "the client hangs after the server died: " << runner->output();
  EXPECT_EQ(*exit_code, 0) << runner->output();
}

TEST(remote_failure, a_server_killed_mid_run_fails_calls_instead_of_hanging) {
  expect_server_loss_reported("run-until-error");
}

TEST(remote_failure, a_server_killed_mid_striped_transfer_fails_it_instead_of_hanging) {
  // The helper's transfers go over four connections.
  expect_server_loss_reported("stripe-until-error", {"TROUPE_ICD_STREAMS=4"});
}

TEST(remote_failure, a_wrong_token_is_refused_and_good_clients_are_still_served) {
  server_options options;
  options.token = "right";
  auto server = serve(options);
  clients helpers;
  EXPECT_EQ(helpers.count_platforms(endpoint(*server) + " wrong"), 0);
  EXPECT_EQ(helpers.count_platforms(endpoint(*server)), 0);  // no token at all
  EXPECT_TRUE(eventually(20s, [&] { return server->session_count() == 0; }));
  EXPECT_GE(helpers.count_platforms(endpoint(*server) + " right"), 1);
  std::string output;
  EXPECT_EQ(helpers.run(endpoint(*server) + " right", {"check-loop", "2"}, &output), 0) << output;
  // A hostfile with a good and a bad server: the bad one is skipped, the good one used.
  auto other = serve();
  EXPECT_GE(helpers.count_platforms(endpoint(*server) + " wrong\n" + endpoint(*other)), 1);
}

TEST(remote_failure, four_clients_at_once) {
  auto server = serve();
  clients helpers;
  std::vector<std::unique_ptr<child_process>> running;
  for (int i = 0; i < 4; ++i) {
    running.push_back(helpers.start(endpoint(*server), {"check-loop", "25"}));
  }
  for (auto& helper : running) {
    EXPECT_TRUE(helper->wait_for_line("ok", 120s)) << helper->output();
    auto code = helper->wait(60s);
    ASSERT_TRUE(code);
    EXPECT_EQ(*code, 0) << helper->output();
  }
  EXPECT_TRUE(
      eventually(20s, [&] { return server->session_count() == 0 && server->object_count() == 0; }));
}

TEST(remote_failure, a_full_server_refuses_the_next_client) {
  server_options options;
  options.max_clients = 1;
  auto server = serve(options);
  clients helpers;
  auto holder = helpers.start(endpoint(*server), {"hold"});
  ASSERT_TRUE(holder->wait_for_line("ready", 120s)) << holder->output();
  EXPECT_EQ(helpers.count_platforms(endpoint(*server)), 0);
  EXPECT_EQ(server->session_count(), 1u);
  holder->close_stdin();
  auto code = holder->wait(60s);
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0);
  ASSERT_TRUE(eventually(20s, [&] { return server->session_count() == 0; }));
  EXPECT_GE(helpers.count_platforms(endpoint(*server)), 1);
}

TEST(remote_failure, releasing_everything_empties_the_session) {
  auto server = serve();
  clients helpers;
  auto client = helpers.start(endpoint(*server), {"lifecycle"});
  ASSERT_TRUE(client->wait_for_line("discovered", 120s)) << client->output();
  // Discovery leaves the platform and device; nothing the client created is counted yet.
  const std::size_t discovered = server->object_count();
  EXPECT_GT(discovered, 0u);
  client->write_line("go");
  ASSERT_TRUE(client->wait_for_line("created", 120s)) << client->output();
  EXPECT_GT(server->object_count(), discovered);
  client->write_line("go");
  ASSERT_TRUE(client->wait_for_line("released", 120s)) << client->output();
  // Releases are pipelined: they arrive soon, not at once.
  EXPECT_TRUE(eventually(20s, [&] { return server->object_count() == discovered; }))
      << server->object_count() << " objects, " << discovered << " after discovery";
  EXPECT_EQ(server->session_count(), 1u);
  client->close_stdin();
  auto code = client->wait(60s);
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 0);
  EXPECT_TRUE(
      eventually(20s, [&] { return server->session_count() == 0 && server->object_count() == 0; }));
}

}  // namespace
}  // namespace troupe::remote_test
