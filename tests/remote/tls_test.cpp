// Encrypted, authenticated connections (issue 36): troupe-deviced with --tls-cert/--tls-key,
// and libtroupe-icd.so with tls-ca= or tls-pin= on a hostfile line. Certificates are made at
// test time (test_certificates.hpp). The proof that matters: a forwarder on the path records
// every byte, and with TLS the token and the kernel's source are not among them, while
// without TLS they are.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "clients.hpp"
#include "recording_forwarder.hpp"
#include "temp_directory.hpp"
#include "test_certificates.hpp"

namespace troupe::remote_test {
namespace {

using namespace std::chrono_literals;

/// A troupe-deviced whose log (stderr) comes on the same pipe as its stdout.
struct logged_deviced {
  std::unique_ptr<child_process> process;
  std::uint16_t port = 0;
  [[nodiscard]] std::string endpoint() const { return "127.0.0.1:" + std::to_string(port); }
  /// Waits for a log line containing `text`; false if the server ended or said nothing such.
  bool logged(const std::string& text) {
    if (process->output().find(text) != std::string::npos) return true;
    while (auto line = process->read_line(30s)) {
      if (line->find(text) != std::string::npos) return true;
    }
    return false;
  }
};

std::vector<std::string> deviced_command(const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", TROUPE_DEVICED};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return argv;
}

logged_deviced start_logged(std::vector<std::string> extra) {
  std::vector<std::string> arguments{"--port", "0", "--log-level", "info"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  logged_deviced started;
  started.process = std::make_unique<child_process>(deviced_command(arguments));
  const std::string marker = "troupe-deviced: listening on 127.0.0.1:";
  auto line = started.process->wait_for_line(marker, 30s);
  if (!line) {
    throw std::runtime_error("troupe-deviced did not start: " + started.process->output());
  }
  started.port = static_cast<std::uint16_t>(std::stoi(line->substr(marker.size())));
  return started;
}

/// What troupe-deviced printed before it ended, and its exit code (-1: still running).
int run_deviced(const std::vector<std::string>& arguments, std::string& output) {
  child_process process(deviced_command(arguments));
  while (auto line = process.read_line(30s)) {
    // "listening on ADDRESS:PORT", not an error that says "listening on ADDRESS, which..."
    if (line->rfind("troupe-deviced: listening on", 0) == 0 &&
        line->find(',') == std::string::npos) {
      output = process.output();
      return -1;  // started: enough
    }
  }
  output = process.output();
  return process.wait(30s).value_or(-1);
}

class tls_test : public ::testing::Test {
 protected:
  /// Runs client_helper with `args` against `hosts`; its stdout and stderr (the driver's
  /// warnings) in `output`. Returns its exit code.
  int run_client(const std::string& hosts, const std::vector<std::string>& args,
                 std::string& output) {
    std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", TROUPE_CLIENT_HELPER};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process helper(argv, clients_.environment(hosts));
    while (helper.read_line(120s)) {
    }
    output = helper.output();
    return helper.wait(120s).value_or(-1);
  }

  /// The platform count a helper printed, or -1.
  int count_platforms(const std::string& hosts, std::string& output) {
    EXPECT_EQ(run_client(hosts, {"count-platforms"}, output), 0) << output;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) {
        return std::stoi(line);
      }
    }
    return -1;
  }

  /// Runs checked rounds of write, kernel and read (client_helper checks every result against
  /// its own computation on the CPU); true when all were right.
  bool checked_rounds(const std::string& hosts, std::string& output) {
    return run_client(hosts, {"check-loop", "3"}, output) == 0 &&
           output.find("ok\n") != std::string::npos;
  }

  logged_deviced start_tls(const std::string& name) {
    return start_logged({"--tls-cert", certificates_.path(name + ".pem"), "--tls-key",
                         certificates_.path(name + ".key")});
  }

  test_certificates certificates_;
  clients clients_;
};

TEST_F(tls_test, a_ca_verified_session_builds_runs_and_reads_back) {
  auto server = start_tls("server");
  std::string output;
  EXPECT_TRUE(checked_rounds(server.endpoint() + " tls-ca=" + certificates_.path("ca.pem"), output))
      << output;
  // By name as well as by address: both are in the certificate.
  EXPECT_TRUE(checked_rounds(
      "localhost:" + std::to_string(server.port) + " tls-ca=" + certificates_.path("ca.pem"),
      output))
      << output;
}

TEST_F(tls_test, a_pinned_self_signed_certificate_works) {
  auto server = start_tls("self");
  std::string output;
  EXPECT_TRUE(
      checked_rounds(server.endpoint() + " tls-pin=" + certificates_.pin("self.pem"), output))
      << output;
}

TEST_F(tls_test, a_wrong_ca_leaves_no_platform_and_says_why) {
  auto server = start_tls("server");
  std::string output;
  EXPECT_EQ(
      count_platforms(server.endpoint() + " tls-ca=" + certificates_.path("other-ca.pem"), output),
      0);
  EXPECT_NE(output.find("skipping the server " + server.endpoint()), std::string::npos) << output;
  EXPECT_NE(output.find("certificate verify failed"), std::string::npos) << output;
}

TEST_F(tls_test, a_wrong_pin_leaves_no_platform_and_says_why) {
  auto server = start_tls("server");
  std::string output;
  EXPECT_EQ(
      count_platforms(server.endpoint() + " tls-pin=" + certificates_.pin("self.pem"), output), 0);
  EXPECT_NE(output.find("skipping the server " + server.endpoint()), std::string::npos) << output;
  EXPECT_NE(output.find("not the pinned " + certificates_.pin("self.pem")), std::string::npos)
      << output;
}

TEST_F(tls_test, a_host_the_certificate_does_not_name_leaves_no_platform) {
  auto server = start_tls("elsewhere");  // signed by the CA, for gpu1.invalid only
  std::string output;
  EXPECT_EQ(count_platforms(server.endpoint() + " tls-ca=" + certificates_.path("ca.pem"), output),
            0);
  EXPECT_NE(output.find("skipping the server " + server.endpoint()), std::string::npos) << output;
  EXPECT_NE(output.find("IP address mismatch"), std::string::npos) << output;
  EXPECT_EQ(count_platforms("localhost:" + std::to_string(server.port) +
                                " tls-ca=" + certificates_.path("ca.pem"),
                            output),
            0);
  EXPECT_NE(output.find("hostname mismatch"), std::string::npos) << output;
}

TEST_F(tls_test, a_plain_client_of_a_tls_server_is_told_and_others_are_served) {
  auto server = start_tls("server");
  std::string output;
  EXPECT_EQ(count_platforms(server.endpoint(), output), 0);
  EXPECT_NE(output.find("takes TLS connections only"), std::string::npos) << output;
  EXPECT_TRUE(server.logged("refused a connection from 127.0.0.1: not TLS"))
      << server.process->output();
  EXPECT_TRUE(checked_rounds(server.endpoint() + " tls-ca=" + certificates_.path("ca.pem"), output))
      << output;
}

TEST_F(tls_test, a_tls_client_of_a_plain_server_is_told_and_others_are_served) {
  auto server = start_logged({});
  std::string output;
  EXPECT_EQ(
      count_platforms(server.endpoint() + " tls-pin=" + certificates_.pin("self.pem"), output), 0);
  EXPECT_NE(output.find("TLS handshake failed"), std::string::npos) << output;
  EXPECT_NE(output.find("without --tls-cert"), std::string::npos) << output;
  EXPECT_TRUE(
      server.logged("refused a connection from 127.0.0.1: not a plain connection: it "
                    "starts a TLS handshake"))
      << server.process->output();
  EXPECT_TRUE(checked_rounds(server.endpoint(), output)) << output;
}

TEST_F(tls_test, a_tls_handshake_that_stalls_is_closed_at_the_handshake_deadline) {
  auto server = start_logged({"--tls-cert", certificates_.path("server.pem"), "--tls-key",
                              certificates_.path("server.key"), "--handshake-timeout-ms", "300"});
  // The start of a TLS record, then nothing: the server is inside OpenSSL's handshake.
  auto stalled = remote::stream_socket::connect("127.0.0.1", server.port, 5000);
  const char start[] = {0x16, 0x03, 0x01, 0x00};
  ASSERT_EQ(::send(stalled.fd(), start, sizeof start, MSG_NOSIGNAL),
            static_cast<ssize_t>(sizeof start));
  // Waits for the server to close it (bounded, so that a server that never does fails).
  pollfd closed{stalled.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&closed, 1, 60000), 1);
  char byte = 0;
  EXPECT_LE(::recv(stalled.fd(), &byte, 1, 0), 0);
  EXPECT_TRUE(server.logged("closed a connection from 127.0.0.1: no whole handshake within 300 ms"))
      << server.process->output();
  std::string output;
  EXPECT_TRUE(checked_rounds(server.endpoint() + " tls-ca=" + certificates_.path("ca.pem"), output))
      << output;
}

TEST_F(tls_test, the_server_refuses_a_network_address_without_tls_unless_insecure) {
  temp_directory scratch;
  const std::string token = (scratch.path() / "token").string();
  std::ofstream(token) << "a-token-for-the-tls-test\n";
  std::string output;
  EXPECT_EQ(run_deviced({"--address", "0.0.0.0", "--port", "0", "--token-file", token}, output), 1);
  EXPECT_NE(output.find("not a loopback address, needs TLS (--tls-cert FILE --tls-key FILE), or "
                        "--insecure"),
            std::string::npos)
      << output;
  EXPECT_EQ(
      run_deviced({"--address", "0.0.0.0", "--port", "0", "--token-file", token, "--insecure"},
                  output),
      -1);
  EXPECT_NE(output.find("listening on 0.0.0.0:"), std::string::npos) << output;
  EXPECT_EQ(
      run_deviced({"--address", "0.0.0.0", "--port", "0", "--token-file", token, "--tls-cert",
                   certificates_.path("server.pem"), "--tls-key", certificates_.path("server.key")},
                  output),
      -1);
  EXPECT_NE(output.find("listening on 0.0.0.0:"), std::string::npos) << output;
  // The token stays required off loopback, TLS or not.
  EXPECT_EQ(
      run_deviced({"--address", "0.0.0.0", "--port", "0", "--tls-cert",
                   certificates_.path("server.pem"), "--tls-key", certificates_.path("server.key")},
                  output),
      1);
  EXPECT_NE(output.find("needs a token file"), std::string::npos) << output;
}

TEST_F(tls_test, the_server_names_a_certificate_or_key_it_cannot_use) {
  std::string output;
  const std::string missing = certificates_.path("missing.pem");
  EXPECT_EQ(
      run_deviced({"--tls-cert", missing, "--tls-key", certificates_.path("server.key")}, output),
      1);
  EXPECT_NE(output.find("cannot read the TLS certificate file " + missing), std::string::npos)
      << output;
  EXPECT_EQ(run_deviced({"--tls-cert", certificates_.path("server.pem")}, output), 1);
  EXPECT_NE(output.find("without --tls-key: give both or neither"), std::string::npos) << output;
  EXPECT_EQ(run_deviced({"--tls-cert", certificates_.path("server.pem"), "--tls-key",
                         certificates_.path("self.key")},
                        output),
            1);
  EXPECT_NE(output.find("the TLS key file " + certificates_.path("self.key") +
                        " does not match the certificate of " + certificates_.path("server.pem")),
            std::string::npos)
      << output;
  EXPECT_EQ(run_deviced({"--tls-cert", certificates_.path("server.key"), "--tls-key",
                         certificates_.path("server.key")},
                        output),
            1);
  EXPECT_NE(output.find("holds no usable PEM certificate"), std::string::npos) << output;
}

TEST_F(tls_test, the_driver_refuses_a_network_host_without_tls_or_insecure) {
  std::string output;
  EXPECT_EQ(count_platforms("# servers\n192.0.2.1:7457 a-token", output), 0);
  EXPECT_NE(output.find(":2: 192.0.2.1 is not a loopback address: give tls-ca=FILE or "
                        "tls-pin=sha256:HEX"),
            std::string::npos)
      << output;
  EXPECT_EQ(count_platforms("192.0.2.1:7457 a-token tls-pin=sha256:12", output), 0);
  EXPECT_NE(output.find(":1: tls-pin: expected a pin of sha256: and 64 hex digits"),
            std::string::npos)
      << output;
  EXPECT_EQ(
      count_platforms("192.0.2.1:7457 a-token tls-ca=" + certificates_.path("missing.pem"), output),
      0);
  EXPECT_NE(output.find(":1: cannot read the CA file " + certificates_.path("missing.pem")),
            std::string::npos)
      << output;
  EXPECT_EQ(count_platforms("127.0.0.1:7457 a-token colour=blue", output), 0);
  EXPECT_NE(output.find(":1: 'colour=blue' is not an option"), std::string::npos) << output;
}

// Someone on the path: with TLS, neither the token nor the program's source crosses in
// clear; without it both do (the control, which shows the check can fail).
TEST_F(tls_test, a_recorder_on_the_path_sees_neither_token_nor_source_under_tls) {
  temp_directory scratch;
  const std::string token = "token-that-must-not-cross-in-clear-7f3a";
  const std::string token_file = (scratch.path() / "token").string();
  std::ofstream(token_file) << token << "\n";
  const std::string source_text = "add_scaled";  // client_helper's kernel
  std::string output;
  {
    // Every connection through the recorder: no local socket beside TCP.
    auto server = start_logged({"--token-file", token_file, "--no-local-socket"});
    recording_forwarder forwarder(server.port);
    ASSERT_TRUE(
        checked_rounds("127.0.0.1:" + std::to_string(forwarder.port()) + " " + token, output))
        << output;
    const std::string plain = forwarder.recorded();
    EXPECT_NE(plain.find(token), std::string::npos) << "the control: plain TCP shows the token";
    EXPECT_NE(plain.find(source_text), std::string::npos);
  }
  auto server =
      start_logged({"--token-file", token_file, "--tls-cert", certificates_.path("server.pem"),
                    "--tls-key", certificates_.path("server.key")});
  recording_forwarder forwarder(server.port);
  ASSERT_TRUE(checked_rounds("127.0.0.1:" + std::to_string(forwarder.port()) + " " + token +
                                 " tls-ca=" + certificates_.path("ca.pem"),
                             output))
      << output;
  const std::string secured = forwarder.recorded();
  // Three rounds of 256 KiB each way went through it.
  EXPECT_GT(secured.size(), std::size_t{3} << 19);
  EXPECT_EQ(secured.find(token), std::string::npos);
  EXPECT_EQ(secured.find(source_text), std::string::npos);
}

}  // namespace
}  // namespace troupe::remote_test
