#pragma once

// Shared by the remote tests: child processes that cannot outlive the test, OpenCL handles that
// release themselves, and the environment that starts two troupe-deviced servers before the
// first OpenCL call of the process.
//
// The servers the test process itself uses run as separate processes: the ICD loader (ocl-icd)
// initializes once, under pthread_once, and that initialization runs the troupe ICD's discovery,
// which waits for the server's platform list. A device_server in the same process would answer
// it by calling clGetPlatformIDs, which waits for that same initialization: a deadlock. The
// in-process device_server tests (failure_test.cpp) therefore serve client_helper processes.
#include <CL/cl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "device/opencl/opencl_errors.hpp"

extern char** environ;

namespace troupe::remote_test {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Errors

/// The name of an OpenCL status ("CL_INVALID_VALUE"): the device layer's table.
inline const char* cl_error_name(cl_int code) {
  return troupe::detail::opencl_error_name(code);
}

/// Asserts that an OpenCL call returned CL_SUCCESS, naming the call and the error.
#define ASSERT_CL(expr)                                                               \
  do {                                                                                \
    const cl_int troupe_status_ = (expr);                                             \
    ASSERT_EQ(troupe_status_, CL_SUCCESS)                                             \
        << #expr << " gave " << ::troupe::remote_test::cl_error_name(troupe_status_); \
  } while (0)
#define EXPECT_CL(expr)                                                               \
  do {                                                                                \
    const cl_int troupe_status_ = (expr);                                             \
    EXPECT_EQ(troupe_status_, CL_SUCCESS)                                             \
        << #expr << " gave " << ::troupe::remote_test::cl_error_name(troupe_status_); \
  } while (0)

// ---------------------------------------------------------------------------------------------
// OpenCL handles

/// Owns one reference to an OpenCL object.
template <class Handle, cl_int (*Release)(Handle)>
class cl_ref {
 public:
  cl_ref() = default;
  explicit cl_ref(Handle handle) : handle_(handle) {}
  cl_ref(cl_ref&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  cl_ref& operator=(cl_ref&& other) noexcept {
    reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  cl_ref(const cl_ref&) = delete;
  cl_ref& operator=(const cl_ref&) = delete;
  ~cl_ref() { reset(); }

  void reset(Handle handle = nullptr) {
    if (handle_ != nullptr) Release(handle_);
    handle_ = handle;
  }
  /// Where an OpenCL call writes a new handle (an event, say); drops the old one first.
  Handle* out() {
    reset();
    return &handle_;
  }
  Handle release() { return std::exchange(handle_, nullptr); }
  [[nodiscard]] Handle get() const { return handle_; }
  /// A one-element list (a wait list, say).
  [[nodiscard]] const Handle* ptr() const { return &handle_; }
  operator Handle() const { return handle_; }  // NOLINT: passed straight to OpenCL calls

 private:
  Handle handle_ = nullptr;
};

using context_ref = cl_ref<cl_context, clReleaseContext>;
using queue_ref = cl_ref<cl_command_queue, clReleaseCommandQueue>;
using mem_ref = cl_ref<cl_mem, clReleaseMemObject>;
using program_ref = cl_ref<cl_program, clReleaseProgram>;
using kernel_ref = cl_ref<cl_kernel, clReleaseKernel>;
using event_ref = cl_ref<cl_event, clReleaseEvent>;
using sampler_ref = cl_ref<cl_sampler, clReleaseSampler>;

/// A fixed-size info value; a failed query fails the test and gives T{}.
// The object and parameter types come from the query function only: CL_* constants are ints.
template <class T, class Object, class Param>
T info(cl_int (*query)(Object, Param, size_t, void*, size_t*), std::type_identity_t<Object> object,
       std::type_identity_t<Param> param) {
  T value{};
  const cl_int status = query(object, param, sizeof value, &value, nullptr);
  EXPECT_EQ(status, CL_SUCCESS) << "info query " << param << " gave " << cl_error_name(status);
  return value;
}

/// A variable-size info value as bytes.
template <class Object, class Param>
std::vector<unsigned char> info_bytes(cl_int (*query)(Object, Param, size_t, void*, size_t*),
                                      std::type_identity_t<Object> object,
                                      std::type_identity_t<Param> param) {
  std::size_t size = 0;
  cl_int status = query(object, param, 0, nullptr, &size);
  EXPECT_EQ(status, CL_SUCCESS) << "info size query " << param << " gave " << cl_error_name(status);
  std::vector<unsigned char> value(size);
  if (size > 0) {
    status = query(object, param, size, value.data(), nullptr);
    EXPECT_EQ(status, CL_SUCCESS) << "info query " << param << " gave " << cl_error_name(status);
  }
  return value;
}

/// A string info value, without its terminating NUL.
template <class Object, class Param>
std::string info_string(cl_int (*query)(Object, Param, size_t, void*, size_t*),
                        std::type_identity_t<Object> object, std::type_identity_t<Param> param) {
  auto bytes = info_bytes(query, object, param);
  std::string text(bytes.begin(), bytes.end());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

inline std::vector<cl_platform_id> all_platforms() {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  return platforms;
}

inline bool is_troupe_platform(cl_platform_id platform) {
  return info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME).find("(troupe @") !=
         std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Child processes

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

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it when this goes.
class temp_directory {
 public:
  temp_directory() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/troupe-remote-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  temp_directory(const temp_directory&) = delete;
  temp_directory& operator=(const temp_directory&) = delete;
  ~temp_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Fills `directory` with .icd files for OCL_ICD_VENDORS: troupe's (if `with_troupe`) and every
/// system one that is not troupe's, so that the local platforms stay visible too.
inline void make_vendors_directory(const std::filesystem::path& directory, bool with_troupe,
                                   bool with_system = true) {
  std::filesystem::create_directories(directory);
  if (with_troupe) {
    std::filesystem::copy_file(TROUPE_ICD_FILE, directory / "troupe.icd",
                               std::filesystem::copy_options::overwrite_existing);
  }
  if (!with_system) return;
  std::error_code missing;
  for (const auto& entry : std::filesystem::directory_iterator("/etc/OpenCL/vendors", missing)) {
    if (entry.path().extension() != ".icd") continue;
    std::ifstream file(entry.path());
    std::string library;
    std::getline(file, library);
    if (library.find("troupe") != std::string::npos) continue;
    std::filesystem::copy_file(entry.path(), directory / entry.path().filename(),
                               std::filesystem::copy_options::overwrite_existing);
  }
}

/// The libraries the .icd files of `vendors` name, troupe's first, joined by ':'. Debian's
/// loader (ocl-icd) reads the folder from OCL_ICD_VENDORS and ignores OCL_ICD_FILENAMES;
/// Khronos' loader (CUDA's libOpenCL) loads exactly OCL_ICD_FILENAMES when both are set. The
/// tests set both, so that either loader sees the same platforms.
inline std::string icd_filenames(const std::filesystem::path& vendors) {
  std::vector<std::string> libraries;
  for (const auto& entry : std::filesystem::directory_iterator(vendors)) {
    if (entry.path().extension() != ".icd") continue;
    std::string library;
    std::getline(std::ifstream(entry.path()), library);
    if (library.empty()) continue;
    if (entry.path().filename() == "troupe.icd") {
      libraries.insert(libraries.begin(), library);
    } else {
      libraries.push_back(library);
    }
  }
  std::string joined;
  for (const auto& library : libraries) joined += (joined.empty() ? "" : ":") + library;
  return joined;
}

/// A troupe-deviced process on 127.0.0.1 and a free port.
struct deviced_process {
  std::unique_ptr<child_process> process;
  std::uint16_t port = 0;
  [[nodiscard]] std::string endpoint() const { return "127.0.0.1:" + std::to_string(port); }
};

/// Starts troupe-deviced with `extra` arguments and reads its port from its first line. Call it
/// before pointing OCL_ICD_VENDORS at a test directory: the server serves the host's platforms.
inline deviced_process start_deviced(std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{TROUPE_DEVICED, "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  deviced_process started;
  started.process = std::make_unique<child_process>(argv);
  auto line = started.process->read_line(30s);
  const std::string marker = "listening on 127.0.0.1:";
  if (!line || line->find(marker) == std::string::npos) {
    throw std::runtime_error("troupe-deviced did not report its port (first line: '" +
                             line.value_or("none") + "')");
  }
  started.port =
      static_cast<std::uint16_t>(std::stoi(line->substr(line->find(marker) + marker.size())));
  return started;
}

/// Runs `body` and returns its result; if it has not returned after `limit`, a watchdog ends
/// the process with a message: a hang becomes a clear failure. The body runs on the calling
/// thread, since the ICD's connections (and deferred errors) belong to threads.
template <class Body>
auto within(std::chrono::seconds limit, const char* what, Body body) {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, limit, [&] { return done; })) {
      std::fprintf(stderr, "FAILURE: %s did not return within %lld s; ending the test process\n",
                   what, static_cast<long long>(limit.count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  });
  auto result = body();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  changed.notify_all();
  watchdog.join();
  return result;
}

/// Polls `condition` until it holds or `limit` passes; returns whether it held.
inline bool eventually(std::chrono::milliseconds limit, const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The environment of remote_tests

/// Two troupe-deviced servers (one that wants a token) and the variables that point the ICD
/// loader at them. Set up before the process's first OpenCL call.
class remote_environment : public ::testing::Environment {
 public:
  static constexpr const char* token = "s3cret-token";

  void SetUp() override {
    instance_ = this;
    try {
      start();
    } catch (const std::exception& error) {
      FAIL() << "cannot set up the remote test servers: " << error.what();
    }
  }

  void start() {
    directory_ = std::make_unique<temp_directory>();
    const auto& dir = directory_->path();
    std::ofstream(dir / "token") << token << "\n";
    plain_ = start_deviced();
    tokened_ = start_deviced({"--token-file", (dir / "token").string()});
    std::ofstream(dir / "hosts") << "# written by remote_tests\n"
                                 << plain_.endpoint() << "\n"
                                 << tokened_.endpoint() << " " << token << "\n";
    make_vendors_directory(dir / "vendors", true);
    ::setenv("OCL_ICD_VENDORS", (dir / "vendors").c_str(), 1);
    ::setenv("OCL_ICD_FILENAMES", icd_filenames(dir / "vendors").c_str(), 1);
    ::setenv("TROUPE_ICD_HOSTS", (dir / "hosts").c_str(), 1);
  }

  void TearDown() override {
    for (auto* server : {&plain_, &tokened_}) {
      if (!server->process) continue;
      server->process->kill(SIGTERM);
      if (!server->process->wait(10s)) server->process->kill(SIGKILL);
      server->process.reset();
    }
    directory_.reset();
  }

  static remote_environment& get() { return *instance_; }
  [[nodiscard]] std::string plain_endpoint() const { return plain_.endpoint(); }
  [[nodiscard]] std::string token_endpoint() const { return tokened_.endpoint(); }

 private:
  std::unique_ptr<temp_directory> directory_;
  deviced_process plain_, tokened_;
  static inline remote_environment* instance_ = nullptr;
};

/// One side of a comparison: a platform's first device with a context and a queue on it.
struct side {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  context_ref context;
  queue_ref queue;
  std::string name;
};

/// The name of the local platform the tests serve and compare against: PoCL (CI), or the one
/// whose name contains $TROUPE_REMOTE_TEST_PLATFORM (e.g. "NVIDIA" on a GPU machine).
inline std::string local_platform_name() {
  const char* chosen = std::getenv("TROUPE_REMOTE_TEST_PLATFORM");
  return chosen != nullptr && *chosen != '\0' ? chosen : "Portable Computing Language";
}

/// The local platform, and the same platform served by troupe-deviced at `endpoint`.
inline cl_platform_id local_platform() {
  const std::string wanted = local_platform_name();
  for (auto platform : all_platforms()) {
    if (is_troupe_platform(platform)) continue;
    if (info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME).find(wanted) !=
        std::string::npos) {
      return platform;
    }
  }
  return nullptr;
}
inline cl_platform_id remote_platform(const std::string& endpoint) {
  cl_platform_id local = local_platform();
  if (local == nullptr) return nullptr;
  const std::string wanted =
      info_string(clGetPlatformInfo, local, CL_PLATFORM_NAME) + " (troupe @ " + endpoint + ")";
  for (auto platform : all_platforms()) {
    if (info_string(clGetPlatformInfo, platform, CL_PLATFORM_NAME) == wanted) return platform;
  }
  return nullptr;
}

inline cl_device_id first_device(cl_platform_id platform) {
  cl_device_id device = nullptr;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    return nullptr;
  }
  return device;
}

/// Opens a side on `platform`: its first device, a context and a queue.
inline void open_side(side& s, cl_platform_id platform, const std::string& name,
                      cl_command_queue_properties properties = 0) {
  s.name = name;
  s.platform = platform;
  ASSERT_NE(platform, nullptr) << "no platform for " << name;
  s.device = first_device(platform);
  ASSERT_NE(s.device, nullptr) << "no device on " << name;
  cl_int status = CL_SUCCESS;
  s.context.reset(clCreateContext(nullptr, 1, &s.device, nullptr, nullptr, &status));
  ASSERT_CL(status);
  s.queue.reset(clCreateCommandQueue(s.context, s.device, properties, &status));
  ASSERT_CL(status);
}

/// Builds `source` for the side's device; a failed build fails the test with its log.
inline program_ref build_program(const side& s, const std::string& source,
                                 const char* options = "") {
  const char* text = source.c_str();
  cl_int status = CL_SUCCESS;
  program_ref program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &status));
  EXPECT_EQ(status, CL_SUCCESS) << cl_error_name(status);
  if (status != CL_SUCCESS) return {};
  status = clBuildProgram(program, 1, &s.device, options, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::size_t size = 0;
    clGetProgramBuildInfo(program, s.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, s.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    while (!log.empty() && log.back() == '\0') log.pop_back();
    ADD_FAILURE() << "build on " << s.name << " failed: " << cl_error_name(status) << "\n" << log;
    return {};
  }
  return program;
}

inline kernel_ref make_kernel(cl_program program, const char* name) {
  cl_int status = CL_SUCCESS;
  kernel_ref kernel(clCreateKernel(program, name, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clCreateKernel(" << name << ") gave " << cl_error_name(status);
  return kernel;
}

inline mem_ref make_buffer(cl_context context, std::size_t size, cl_mem_flags flags = 0,
                           void* host = nullptr) {
  cl_int status = CL_SUCCESS;
  mem_ref buffer(clCreateBuffer(context, flags, size, host, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clCreateBuffer of " << size << " bytes gave "
                                << cl_error_name(status);
  return buffer;
}

template <class T>
cl_int set_arg(cl_kernel kernel, cl_uint index, const T& value) {
  return clSetKernelArg(kernel, index, sizeof(T), &value);
}

/// Kernels most tests use.
inline const char* const common_kernels = R"(
__kernel void add(__global const float* a, __global const float* b, __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void increment(__global int* x, int by) {
  x[get_global_id(0)] += by;
}
__kernel void group_sum(__global const float* in, __global float* out, __local float* scratch) {
  size_t lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
)";

/// Fixture of the API tests: the local PoCL side and the same device through troupe-deviced.
class remote_test : public ::testing::Test {
 protected:
  void SetUp() override {
    open_side(local, local_platform(), "local");
    open_side(remote, remote_platform(remote_environment::get().plain_endpoint()), "remote");
  }

  side local, remote;
};

}  // namespace troupe::remote_test
