// bench-remote: the same raw OpenCL C API code against one device of this host reached directly
// ("native") and the same device served by a troupe-deviced through troupe's ICD driver,
// libtroupe-icd.so ("troupe"), side by side and alternating in one process (BENCHMARKS.md).
//
// Both sides are in one process through the ICD loader (ocl-icd): before the first OpenCL call,
// OCL_ICD_VENDORS names a temporary folder holding troupe.icd and the host's vendor .icd files,
// and TROUPE_ICD_HOSTS a host file naming the server. The server is, by default, troupe-deviced's
// engine in a child process that bench-remote forks at start, on 127.0.0.1 (loopback); with
// --server, one started elsewhere (another host, or another network namespace).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "remote/remote_bench.hpp"
#include "troupe/remote/cl_troupe_remote.h"
#include "troupe/remote/device_server.hpp"

#ifndef TROUPE_BENCH_ICD_FILE
#error "define TROUPE_BENCH_ICD_FILE (the build tree's troupe.icd), as bench/CMakeLists.txt does"
#endif

namespace troupe::bench::remote {

endpoint::endpoint(std::string variant, cl_device_id id)
    : variant_(std::move(variant)), device_(id), queue_(device_.make_queue()) {}

opencl::kernel endpoint::kernel(const char* source, const char* name) {
  auto found = std::find_if(programs_.begin(), programs_.end(),
                            [source](const auto& entry) { return entry.first == source; });
  if (found == programs_.end()) {
    std::size_t length = std::strlen(source);
    cl_int status = CL_SUCCESS;
    program made{clCreateProgramWithSource(context(), 1, &source, &length, &status)};
    opencl::check(status, "clCreateProgramWithSource");
    cl_device_id device = id();
    status = clBuildProgram(made.get(), 1, &device, "", nullptr, nullptr);
    if (status != CL_SUCCESS) {
      std::size_t size = 0;
      clGetProgramBuildInfo(made.get(), device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(made.get(), device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      throw std::runtime_error("clBuildProgram failed with status " + std::to_string(status) +
                               " on the " + variant_ + " side:\n" + log);
    }
    programs_.emplace_back(source, std::move(made));
    found = programs_.end() - 1;
  }
  cl_int status = CL_SUCCESS;
  opencl::kernel made{clCreateKernel(found->second.get(), name, &status)};
  opencl::check(status, std::string("clCreateKernel(") + name + ")");
  return made;
}

namespace {

constexpr std::string_view suite = "remote";

// -- the command line -------------------------------------------------------------------------

struct remote_options {
  /// host:port[,token] of a running troupe-deviced; empty: fork one on loopback.
  std::string server;
  /// The external server's certificate pin ("sha256:" and hex): reach it by TLS, not plain TCP.
  std::string server_tls_pin;
  /// Vendor .icd files for the local platforms (default: every file of /etc/OpenCL/vendors).
  std::vector<std::filesystem::path> vendor_icds;
  /// troupe.icd, or libtroupe-icd.so itself.
  std::filesystem::path troupe_icd = TROUPE_BENCH_ICD_FILE;
  std::size_t stream_size = 0;  // 0: by device type
  std::size_t max_bytes = std::size_t{256} << 20;
  std::vector<std::size_t> matmul_sizes;
  std::size_t split_size = 0;  // 0: the largest matmul size
  /// Forks a second server, with TLS, for a "troupe-tls" side of the transfer benchmark.
  bool tls = false;
};

std::string own_usage() {
  return usage(suite) +
         "  --server HOST:PORT[,TOKEN]  use this troupe-deviced, over plain TCP (default: fork one "
         "on 127.0.0.1)\n"
         "  --server-tls-pin sha256:HEX  reach --server by TLS, its certificate pinned to HEX\n"
         "  --vendor-icd FILE  a vendor .icd for the local platforms and the forked server's "
         "(repeatable; default: every file of /etc/OpenCL/vendors)\n"
         "  --troupe-icd FILE  troupe.icd or libtroupe-icd.so (default: the build tree's)\n"
         "  --stream-size N    BabelStream elements per array (default 2^25, BabelStream's)\n"
         "  --max-bytes N      largest transfer size (default 268435456)\n"
         "  --matmul-sizes N,N,...  matmul sizes, multiples of 16 (default 256,512,1024)\n"
         "  --split-n N        the split benchmark's matrix size (default: the largest matmul N)\n"
         "  --tls              transfers through a second forked server with TLS as well "
         "(troupe-tls; needs the openssl command)\n";
}

std::size_t parse_size(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value == 0)
    throw usage_error(flag + ": expected a positive integer, found '" + text + "'");
  return static_cast<std::size_t>(value);
}

// Takes bench-remote's own options out of `arguments`, leaving the harness's.
remote_options take_own_options(std::vector<std::string>& arguments) {
  remote_options result;
  std::vector<std::string> rest;
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    const std::string& flag = arguments[index];
    auto value = [&]() -> std::string {
      if (index + 1 >= arguments.size())
        throw usage_error(flag + ": expected a value after it, found none");
      return arguments[++index];
    };
    if (flag == "--server") {
      result.server = value();
    } else if (flag == "--server-tls-pin") {
      result.server_tls_pin = value();
    } else if (flag == "--vendor-icd") {
      result.vendor_icds.emplace_back(value());
    } else if (flag == "--troupe-icd") {
      result.troupe_icd = value();
    } else if (flag == "--stream-size") {
      result.stream_size = parse_size(flag, value());
    } else if (flag == "--max-bytes") {
      result.max_bytes = parse_size(flag, value());
    } else if (flag == "--matmul-sizes") {
      std::istringstream sizes(value());
      for (std::string size; std::getline(sizes, size, ',');)
        if (!size.empty()) result.matmul_sizes.push_back(parse_size(flag, size));
    } else if (flag == "--split-n") {
      result.split_size = parse_size(flag, value());
    } else if (flag == "--tls") {
      result.tls = true;
    } else {
      rest.push_back(flag);
    }
  }
  arguments = std::move(rest);
  return result;
}

// -- the client's configuration -----------------------------------------------------------------

// A fresh folder under the system's temporary directory, removed with its contents at the end.
class temporary_folder {
 public:
  temporary_folder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bench-remote.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    path_ = pattern;
  }
  ~temporary_folder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temporary_folder(const temporary_folder&) = delete;
  temporary_folder& operator=(const temporary_folder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Copies the vendor .icd files into `folder`; returns how many.
std::size_t copy_vendor_icds(const remote_options& given, const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  std::vector<std::filesystem::path> files = given.vendor_icds;
  if (files.empty()) {
    std::error_code missing;
    for (const auto& entry : std::filesystem::directory_iterator("/etc/OpenCL/vendors", missing))
      if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::size_t copied = 0;
  for (const auto& file : files) {
    if (!std::filesystem::is_regular_file(file))
      throw usage_error("--vendor-icd: " + file.string() + " is not a file");
    // Numbered, so that two vendors' files of one name both stay.
    std::filesystem::copy_file(
        file, folder / (std::to_string(copied++) + "-" + file.filename().string()));
  }
  return copied;
}

// Adds troupe's .icd to `folder`: a copy of troupe.icd, or one written for the library.
void add_troupe_icd(const std::filesystem::path& given, const std::filesystem::path& folder) {
  if (!std::filesystem::is_regular_file(given))
    throw usage_error("--troupe-icd: " + given.string() +
                      " is not a file (build the troupe_icd target, or name troupe.icd or "
                      "libtroupe-icd.so)");
  if (given.extension() == ".icd") {
    std::filesystem::copy_file(given, folder / "troupe.icd");
  } else {
    std::ofstream(folder / "troupe.icd") << std::filesystem::absolute(given).string() << "\n";
  }
}

void write_all(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

// Forks the server process, which serves this host's platforms (those of `vendors`, a vendors
// folder without troupe.icd) on 127.0.0.1 until this process ends; returns its port.
//
// Why not a thread of this process: the ICD loader (ocl-icd) loads troupe's driver from inside
// the first clGetPlatformIDs, and the driver then asks the server for its platforms. A server
// thread answering that calls clGetPlatformIDs too, and ocl-icd makes any second caller wait
// until the first call's initialization ends: it never does.
std::uint16_t fork_server(const std::filesystem::path& vendors, pid_t& child,
                          const std::filesystem::path& tls_files = {}) {
  int channel[2];
  if (::pipe2(channel, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  child = ::fork();
  if (child < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (child == 0) {
    ::close(channel[0]);
    // The server ends with this process, however it ends.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(0);
    ::signal(SIGPIPE, SIG_IGN);
    std::string why;
    try {
      ::setenv("OCL_ICD_VENDORS", vendors.c_str(), 1);
      troupe::remote::server::server_options options;
      options.address = "127.0.0.1";
      options.port = 0;
      if (!tls_files.empty()) {
        options.tls_certificate = (tls_files / "cert.pem").string();
        options.tls_key = (tls_files / "key.pem").string();
      }
      troupe::remote::server::device_server server(options);
      const std::uint16_t port = server.port();
      write_all(channel[1], &port, sizeof port);
      ::close(channel[1]);
      server.run();
      ::_exit(0);
    } catch (const std::exception& error) {
      why = error.what();
    }
    const std::uint16_t none = 0;
    write_all(channel[1], &none, sizeof none);
    write_all(channel[1], why.data(), why.size());
    ::_exit(1);
  }
  ::close(channel[1]);
  std::uint16_t port = 0;
  ssize_t got = ::read(channel[0], &port, sizeof port);
  if (got != static_cast<ssize_t>(sizeof port) || port == 0) {
    char why[512] = {};
    ssize_t length = ::read(channel[0], why, sizeof why - 1);
    ::close(channel[0]);
    ::waitpid(child, nullptr, 0);
    throw std::runtime_error(std::string("the server process did not start") +
                             (length > 0 ? std::string(": ") + why : std::string()));
  }
  ::close(channel[0]);
  return port;
}

// A self-signed certificate and key in `folder` (cert.pem, key.pem) for the TLS server; returns
// its pin, "sha256:" and the hex SHA-256 of its DER.
std::string make_certificate(const std::filesystem::path& folder) {
  const std::string quiet = " 2>" + (folder / "openssl.log").string();
  const std::string made =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "
      "/CN=bench-remote -keyout " +
      (folder / "key.pem").string() + " -out " + (folder / "cert.pem").string() + quiet +
      " && openssl x509 -in " + (folder / "cert.pem").string() +
      " -outform DER | openssl dgst -sha256 -r >" + (folder / "pin").string() + quiet;
  std::string digest;
  if (std::system(made.c_str()) == 0) std::ifstream(folder / "pin") >> digest;
  if (digest.size() != 64)
    throw std::runtime_error("--tls: the openssl command made no certificate (see " +
                             (folder / "openssl.log").string() + ")");
  return "sha256:" + digest;
}

// -- the devices ------------------------------------------------------------------------------

std::string platform_text(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string text(size, '\0');
  if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

struct found_device {
  cl_device_id id = nullptr;
  std::string name;
  std::string platform;
  cl_device_type type = 0;
};

struct found_devices {
  std::vector<found_device> local;
  std::vector<found_device> remote;  // on troupe's platforms of our server
};

found_devices list_devices(const std::string& endpoint) {
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  if (status != CL_SUCCESS || count == 0)
    throw std::runtime_error(
        "no OpenCL platform found (clGetPlatformIDs: " + std::to_string(status) + ")");
  std::vector<cl_platform_id> platforms(count);
  opencl::check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  found_devices found;
  for (cl_platform_id platform : platforms) {
    const std::string name = platform_text(platform, CL_PLATFORM_NAME);
    // Only troupe's platforms answer this query.
    const std::string served_by = platform_text(platform, CL_PLATFORM_REMOTE_ENDPOINT_TROUPE);
    if (!served_by.empty() && served_by != endpoint) continue;
    cl_uint devices = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(devices);
    opencl::check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices, ids.data(), nullptr),
                  "clGetDeviceIDs");
    for (cl_device_id id : ids) {
      found_device device{id, opencl::device_name(id), name,
                          device_info<cl_device_type>(id, CL_DEVICE_TYPE)};
      (served_by.empty() ? found.local : found.remote).push_back(device);
    }
  }
  return found;
}

// The local device: the first GPU, else the first CPU, else the first device.
const found_device& choose_local(const std::vector<found_device>& local) {
  if (local.empty()) throw std::runtime_error("no local OpenCL device found");
  for (cl_device_type wanted :
       {cl_device_type{CL_DEVICE_TYPE_GPU}, cl_device_type{CL_DEVICE_TYPE_CPU}})
    for (const found_device& each : local)
      if (each.type & wanted) return each;
  return local.front();
}

// The same device behind the server: same name and type (its platform named after the local
// one's first), else the first of the same type.
const found_device& choose_remote(const std::vector<found_device>& remote,
                                  const found_device& local, const std::string& endpoint) {
  if (remote.empty())
    throw std::runtime_error("no device reached through troupe's ICD at " + endpoint +
                             " (see troupe-icd's warnings above)");
  const found_device* same_type = nullptr;
  const found_device* same_name = nullptr;
  for (const found_device& each : remote) {
    if (each.type != local.type) continue;
    if (!same_type) same_type = &each;
    if (each.name != local.name) continue;
    if (each.platform.rfind(local.platform, 0) == 0) return each;
    if (!same_name) same_name = &each;
  }
  if (same_name) return *same_name;
  if (same_type) {
    std::printf("warning: the server at %s has no device named '%s'; using its '%s'\n",
                endpoint.c_str(), local.name.c_str(), same_type->name.c_str());
    return *same_type;
  }
  throw std::runtime_error("the server at " + endpoint +
                           " offers no device of the local one's "
                           "type (" +
                           std::to_string(remote.size()) + " devices in all)");
}

const char* type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

// -- the sizes ----------------------------------------------------------------------------------

plan make_plan(const remote_options& given, bool quick) {
  plan sizes;
  sizes.quick = quick;
  sizes.calls = quick ? 100 : 1000;
  std::vector<std::size_t> transfers{4, 4096, std::size_t{1} << 20, std::size_t{64} << 20,
                                     std::size_t{256} << 20};
  if (quick) transfers = {4, 4096, std::size_t{1} << 20};
  for (std::size_t bytes : transfers)
    if (bytes <= given.max_bytes) sizes.transfer_bytes.push_back(bytes);
  // BabelStream's default of 2^25 doubles per array on every device: on 2 cores with PoCL, its
  // five kernels take about half a minute for both sides together.
  if (given.stream_size != 0) {
    sizes.stream_size = given.stream_size;
    if (sizes.stream_size != std::size_t{1} << 25) sizes.stream_note = " (--stream-size)";
  } else if (quick) {
    sizes.stream_size = std::size_t{1} << 16;
    sizes.stream_note = " (--quick)";
  }
  sizes.matmul_sizes = given.matmul_sizes;
  if (sizes.matmul_sizes.empty())
    sizes.matmul_sizes =
        quick ? std::vector<std::size_t>{64, 128} : std::vector<std::size_t>{256, 512, 1024};
  sizes.split_size = given.split_size != 0
                         ? given.split_size
                         : *std::max_element(sizes.matmul_sizes.begin(), sizes.matmul_sizes.end());
  return sizes;
}

int run(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  remote_options given = take_own_options(arguments);
  std::vector<char*> pointers{argv[0]};
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  options settings = parse_options(suite, static_cast<int>(pointers.size()), pointers.data());
  if (settings.help) {
    std::cout << own_usage();
    return 0;
  }

  // Before any OpenCL call: the loader reads OCL_ICD_VENDORS once, at the first.
  temporary_folder folder;
  const std::filesystem::path client_vendors = folder.path() / "client-vendors";
  const std::filesystem::path server_vendors = folder.path() / "server-vendors";
  if (copy_vendor_icds(given, client_vendors) == 0)
    throw std::runtime_error(
        "no vendor .icd file in /etc/OpenCL/vendors; name one with "
        "--vendor-icd");
  add_troupe_icd(given.troupe_icd, client_vendors);
  copy_vendor_icds(given, server_vendors);

  std::string address, token, server_text;
  pid_t server_process = 0;
  if (given.server.empty()) {
    const std::uint16_t port = fork_server(server_vendors, server_process);
    address = "127.0.0.1:" + std::to_string(port);
    server_text = "troupe-deviced's engine in a process bench-remote forked at start (pid " +
                  std::to_string(server_process) + "), on " + address +
                  " (loopback). Client, server and both devices share this host's cores, so "
                  "the server's work counts against the troupe rows";
  } else {
    address = given.server;
    if (auto comma = address.find(','); comma != std::string::npos) {
      token = address.substr(comma + 1);
      address.erase(comma);
    }
    if (address.find(':') == std::string::npos)
      throw usage_error("--server: expected HOST:PORT[,TOKEN], found '" + given.server + "'");
    server_text = "an external troupe-deviced at " + address + (token.empty() ? "" : " (token)");
  }
  const std::filesystem::path hosts = folder.path() / "hosts";
  // An external server is measured over plain TCP (started with --insecure off loopback), where
  // `insecure` lets the driver reach it, or by TLS with its certificate pinned.
  if (!given.server_tls_pin.empty() && given.server.empty())
    throw usage_error("--server-tls-pin: names the certificate of a --server, and none is given");
  const std::string reach = given.server.empty()           ? ""
                            : given.server_tls_pin.empty() ? " insecure"
                                                           : " tls-pin=" + given.server_tls_pin;
  std::ofstream(hosts) << address << (token.empty() ? "" : " " + token) << reach << "\n";
  if (!given.server_tls_pin.empty()) server_text += ", by TLS";
  std::string tls_address;
  pid_t tls_process = 0;
  if (given.tls) {
    const std::string pin = make_certificate(folder.path());
    tls_address =
        "127.0.0.1:" + std::to_string(fork_server(server_vendors, tls_process, folder.path()));
    std::ofstream(hosts, std::ios::app) << tls_address << " tls-pin=" << pin << "\n";
    server_text += "; troupe-tls: a second such server, with TLS, on " + tls_address;
  }
  ::setenv("OCL_ICD_VENDORS", client_vendors.c_str(), 1);
  // Debian's loader (ocl-icd) reads the folder and ignores OCL_ICD_FILENAMES; Khronos' loader
  // (CUDA's libOpenCL) loads exactly OCL_ICD_FILENAMES when both are set. Both name the same.
  std::string filenames;
  for (const auto& entry : std::filesystem::directory_iterator(client_vendors)) {
    std::string library;
    std::getline(std::ifstream(entry.path()), library);
    if (!library.empty()) filenames += (filenames.empty() ? "" : ":") + library;
  }
  ::setenv("OCL_ICD_FILENAMES", filenames.c_str(), 1);
  ::setenv("TROUPE_ICD_HOSTS", hosts.c_str(), 1);

  found_devices devices = list_devices(address);
  const found_device& local = choose_local(devices.local);
  const found_device& remote = choose_remote(devices.remote, local, address);
  plan sizes = make_plan(given, settings.quick);

  device_bench bench{settings};
  std::cout << "bench-remote: " << settings.warmup << " warm-up + " << settings.runs
            << " timed runs per variant" << (settings.quick ? " (quick)" : "") << ", CSV "
            << settings.csv.string() << "\n"
            << "  server: " << server_text << "\n"
            << "  native: " << local.name << " (" << type_name(local.type) << ") of '"
            << local.platform << "', called directly\n"
            << "  troupe: " << remote.name << " of '" << remote.platform
            << "', through libtroupe-icd.so\n"
            << "  sizes:  the same for GPU and CPU devices"
            << (sizes.stream_note.empty() ? "" : "; BabelStream's arrays" + sizes.stream_note)
            << "\n\n";

  endpoint native_side("native", local.id);
  endpoint troupe_side("troupe", remote.id);
  setup under_test{native_side, troupe_side, {"opencl", local.name}, sizes, 0};
  std::optional<endpoint> tls_side;
  if (given.tls) {
    found_devices served = list_devices(tls_address);
    tls_side.emplace("troupe-tls", choose_remote(served.remote, local, tls_address).id);
    under_test.troupe_tls = &*tls_side;
  }
  under_test.max_allocation =
      std::min(device_info<cl_ulong>(local.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE),
               device_info<cl_ulong>(remote.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE));

  run_latency(bench, under_test);
  run_transfer(bench, under_test);
  const bool stream_ok = run_babelstream(bench, under_test);
  run_matmul(bench, under_test);
  run_split(bench, under_test);
  const int code = bench.finish();
  return code == 0 && !stream_ok ? 1 : code;
}

}  // namespace
}  // namespace troupe::bench::remote

int main(int argc, char** argv) {
  using namespace troupe::bench;
  try {
    return remote::run(argc, argv);
  } catch (const usage_error& error) {
    std::cerr << "bench-remote: " << error.what() << "\n\n" << remote::own_usage();
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "bench-remote: " << error.what() << std::endl;
    return 1;
  }
}
