// troupe-deviced: serves this host's OpenCL devices to troupe's ICD driver on other hosts.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "crash_report.hpp"
#include "troupe/remote/device_server.hpp"

namespace {

std::string read_token(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read the token file " + path);
  std::string token;
  std::getline(file, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty())
    throw std::runtime_error("the token file " + path + " has an empty first line");
  return token;
}

// Each connection costs a file descriptor; the soft limit (often 1024) would let a few
// thousand silent connections use them all. Raised to the hard limit, which only root raises.
void raise_open_file_limit(troupe::remote::server::log_level level) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == limit.rlim_max) return;
  const auto before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    std::fprintf(stderr, "troupe-deviced: warn: cannot raise the open file limit from %llu: %s\n",
                 static_cast<unsigned long long>(before), std::strerror(errno));
  } else if (level >= troupe::remote::server::log_level::info) {
    std::fprintf(stderr, "troupe-deviced: info: open file limit raised from %llu to %llu\n",
                 static_cast<unsigned long long>(before),
                 static_cast<unsigned long long>(limit.rlim_cur));
  }
}

// The compilers run in this process and look for a relative #include beside the source too,
// which for a source given as text is the working folder. An empty folder of the daemon's own
// makes that find nothing (build_refusals.hpp); it is removed when the daemon ends.
class empty_working_folder {
 public:
  empty_working_folder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "troupe-deviced-cwd-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr || ::chdir(pattern.c_str()) != 0) {
      throw std::runtime_error("cannot make and enter an empty working folder " + pattern + ": " +
                               std::strerror(errno));
    }
    path_ = pattern;
  }
  empty_working_folder(const empty_working_folder&) = delete;
  empty_working_folder& operator=(const empty_working_folder&) = delete;
  ~empty_working_folder() {
    if (::chdir("/") == 0) ::rmdir(path_.c_str());
  }

 private:
  std::string path_;
};

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena for the whole server: glibc's other arenas (up to 8 per core) each keep up
  // to 64 MiB free at their top, which malloc_trim cannot shrink (only the main arena's), so the
  // server's memory would grow with the clients it had (memory_return.hpp).
  // Small allocations stay per thread (tcache); large ones are one per 8 MiB transfer piece.
  mallopt(M_ARENA_MAX, 1);
  using namespace troupe::remote;
  CLI::App app{
      "troupe-deviced: serves this host's OpenCL platforms to remote OpenCL programs "
      "that use libtroupe-icd.so"};
  server::server_options options;
  std::string token_file;
  std::string level = "info";
  app.add_option("--address", options.address, "address to listen on (numeric)")
      ->capture_default_str();
  app.add_option("--port", options.port, "TCP port (0: any free port, printed at start)")
      ->capture_default_str();
  app.add_option("--token-file", token_file,
                 "file whose first line clients must present; required unless the address is "
                 "loopback")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", options.tls_certificate,
                 "PEM file of the server's certificate chain; with --tls-key, every connection "
                 "is TLS");
  app.add_option("--tls-key", options.tls_key, "PEM file of the private key of --tls-cert");
  app.add_flag("--insecure", options.insecure,
               "serve an address that is not loopback without TLS: the token, session keys "
               "and data cross the network in clear text");
  app.add_option("--max-clients", options.max_clients, "sessions served at once")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  unsigned handshake_ms = static_cast<unsigned>(options.handshake_timeout.count());
  app.add_option("--max-handshakes", options.max_handshakes,
                 "connections still in their handshake, at most; the next one closes the "
                 "oldest")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--handshake-timeout-ms", handshake_ms,
                 "milliseconds a connection has for its whole handshake")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  unsigned idle_s = static_cast<unsigned>(options.idle_timeout.count() / 1000);
  app.add_option("--idle-timeout-s", idle_s,
                 "seconds a session may do nothing (no frame, nothing in progress) before it is "
                 "closed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-session-connections", options.max_session_connections,
                 "request connections one session may have open at once (a client opens one "
                 "per thread)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bool no_local_socket = false;
  app.add_flag("--no-local-socket", no_local_socket,
               "on a loopback address, serve this host's clients by TCP only, not also through "
               "a local socket (whose round trips take half as long)");
  app.add_option("--spin-us", options.spin_us,
                 "microseconds a connection polls for its next request before it sleeps "
                 "(0: sleep at once; saves a core per busy client, costs latency)")
      ->capture_default_str();
  app.add_option("--session-device-memory", options.session_device_memory,
                 "bytes of buffers and images one session may hold (suffixes K, M, G: powers of "
                 "1024; 0: no limit but the devices')")
      ->capture_default_str()
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--session-host-memory", options.session_host_memory,
                 "bytes the server may hold for one session's reads and non-blocking writes in "
                 "flight (0: no limit)")
      ->capture_default_str()
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--pinned-buffers", options.pinned_buffers,
                 "pinned 8 MiB buffers per context of a session that reads land in and writes "
                 "leave from (each counts against the session's host memory while kept; 0: "
                 "plain memory)")
      ->capture_default_str();
  app.add_option("--session-objects", options.session_objects,
                 "OpenCL objects of every kind (events too) one session may hold (0: no limit)")
      ->capture_default_str();
  app.add_option("--log-level", level, "error, warn, info or debug")
      ->capture_default_str()
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  CLI11_PARSE(app, argc, argv);

  try {
    options.level = server::parse_log_level(level);
    options.handshake_timeout = std::chrono::milliseconds(handshake_ms);
    options.idle_timeout = std::chrono::seconds(idle_s);
    options.local_socket = !no_local_socket;
    if (!token_file.empty()) options.token = read_token(token_file);
    raise_open_file_limit(options.level);
    troupe::deviced::report_crashes();
    empty_working_folder working_folder;  // after every path of the command line is read
    // Signals are taken by one thread with sigwait, so that stopping is not done in a handler.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    server::device_server served(options);
    std::printf("troupe-deviced: listening on %s:%u\n", options.address.c_str(),
                static_cast<unsigned>(served.port()));
    std::fflush(stdout);
    std::thread stopper([&] {
      int received = 0;
      sigwait(&signals, &received);
      served.stop();
    });
    served.run();
    pthread_kill(stopper.native_handle(), SIGTERM);  // wakes the waiter if run() ended first
    stopper.join();
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "troupe-deviced: " << error.what() << "\n";
    return 1;
  }
}
