#pragma once

// Child processes that cannot outlive the test.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace troupe::remote_test {

using namespace std::chrono_literals;

/// A child process with a pipe on its stdin and one on its stdout (stderr is the test's). It is
/// killed with SIGKILL when this object goes, and by the kernel if the test process dies first.
class child_process {
 public:
  /// Starts argv[0] with this process's environment plus `environment` ("NAME=value" entries
  /// replace variables of the same name).
  explicit child_process(std::vector<std::string> argv, std::vector<std::string> environment = {}) {
    std::signal(SIGPIPE, SIG_IGN);  // writing to a child that died must not end the test
    std::vector<std::string> variables;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string variable(*entry);
      auto name = variable.substr(0, variable.find('=') + 1);
      bool replaced = false;
      for (const auto& given : environment) replaced |= given.rfind(name, 0) == 0;
      if (!replaced) variables.push_back(variable);
    }
    variables.insert(variables.end(), environment.begin(), environment.end());
    // Everything the child needs is built before fork: after it, only system calls.
    std::vector<char*> args, envp;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    for (auto& variable : variables) envp.push_back(variable.data());
    envp.push_back(nullptr);
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2 failed");
    }
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    in_ = in[1];
    out_ = out[0];
    if (pid_ < 0) throw std::runtime_error("fork failed");
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process() {
    if (!status_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (in_ >= 0) ::close(in_);
    ::close(out_);
  }

  [[nodiscard]] pid_t pid() const { return pid_; }

  /// The next line of the child's stdout, or nothing if none came within `timeout` or the child
  /// closed its stdout.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        output_ += line + "\n";
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd waiting{out_, POLLIN, 0};
      int ready = ::poll(&waiting, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t got = ::read(out_, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(got));
    }
  }

  /// Reads lines until one starts with `prefix`; returns it, or nothing after `timeout`.
  std::optional<std::string> wait_for_line(const std::string& prefix,
                                           std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto line = read_line(left);
      if (!line) return std::nullopt;
      if (line->rfind(prefix, 0) == 0) return line;
    }
  }

  /// Everything the child wrote until it has been quiet for `quiet` (or closed its stdout), for
  /// failure messages that need its last words too.
  const std::string& output_until_quiet(std::chrono::milliseconds quiet) {
    while (read_line(quiet)) {
    }
    return output_;
  }

  /// Everything read from the child's stdout so far, for failure messages.
  [[nodiscard]] const std::string& output() const { return output_; }

  void write_line(const std::string& line) {
    std::string text = line + "\n";
    [[maybe_unused]] auto written = ::write(in_, text.data(), text.size());
  }
  void close_stdin() {
    if (in_ >= 0) ::close(std::exchange(in_, -1));
  }
  void kill(int signal) {
    if (!status_) ::kill(pid_, signal);
  }

  /// The exit code (128 + signal when killed), or nothing if still running after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!status_) {
      int status = 0;
      pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  std::string output_;
  std::optional<int> status_;
};

}  // namespace troupe::remote_test
