// client_helper: a plain OpenCL program for the remote failure tests. It goes through the
// system's ICD loader like any application; the test points OCL_ICD_VENDORS and
// TROUPE_ICD_HOSTS at its servers. Modes (argv[1]):
//   count-platforms    prints the number of troupe platforms
//   platform-names     prints the name of each troupe platform, one a line
//   check-loop N       N checked rounds of write, kernel, read; exit 0 if all were right
//   transfer-forever [MiB]  writes and reads buffers of MiB (64) in a loop, "ready" after the
//                      first round
//   mixed-operations N N operations (create, write, launch, read, finish, release), each result
//                      checked against the host; prints "done <operations> <errors>"
//   finish-forever     "finishing", then a clFinish on a kernel that runs for minutes; prints
//                      "error <code>" when the call fails, "ok" if it returns
//   idle-then-call     "ready", then on a line of stdin one blocking write; "error <code>" or
//                      "ok"
//   stripe-until-error blocking 64 MB writes and reads in a loop, "ready" after the first,
//                      "error CODE" once one fails
//   long-kernel S      runs a kernel that takes at least S seconds; "ok <seconds>" if right
//   hold               creates a few objects, prints "ready", waits for stdin to close
//   run-until-error    loops kernel and read, "ready" after the first round; on the first
//                      error prints "error <code>" and exits 0
//   lifecycle          "discovered", then on "go" creates objects ("created"), then on "go"
//                      releases them all ("released"), then waits for stdin to close
#include <CL/cl.h>
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const char* what, cl_int status) {
  std::printf("error %d\n", status);
  std::fflush(stdout);
  std::fprintf(stderr, "client_helper: %s gave %d\n", what, status);
  std::exit(1);
}

#define CHECK(expr)                                             \
  do {                                                          \
    cl_int check_status_ = (expr);                              \
    if (check_status_ != CL_SUCCESS) die(#expr, check_status_); \
  } while (0)

void say(const char* line) {
  std::printf("%s\n", line);
  std::fflush(stdout);
}

// Waits for a line on stdin; false at end of input.
bool next_line() {
  char line[256];
  return std::fgets(line, sizeof line, stdin) != nullptr;
}

std::vector<cl_platform_id> troupe_platforms() {
  cl_uint count = 0;
  // No platform at all is not an error here: the loader reports it as one.
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_platform_id> platforms(count);
  CHECK(clGetPlatformIDs(count, platforms.data(), nullptr));
  std::vector<cl_platform_id> remote;
  for (auto platform : platforms) {
    // troupe's platforms keep their servers' names; cl_troupe_remote marks them.
    char extensions[4096] = {};
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, sizeof extensions - 1, extensions,
                            nullptr));
    if (std::strstr(extensions, "cl_troupe_remote") != nullptr) remote.push_back(platform);
  }
  return remote;
}

const char* source = R"(
__kernel void add_scaled(__global const int* a, __global int* b, int scale) {
  size_t i = get_global_id(0);
  b[i] = a[i] * scale + (int)i;
}
)";

// A context, queue, program and kernel on the first troupe platform's first device.
struct session {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;

  void discover() {
    auto platforms = troupe_platforms();
    if (platforms.empty()) die("finding a troupe platform", CL_DEVICE_NOT_FOUND);
    platform = platforms.front();
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
  }
  void open() {
    discover();
    cl_int status = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
    CHECK(status);
    queue = clCreateCommandQueue(context, device, 0, &status);
    CHECK(status);
    program = clCreateProgramWithSource(context, 1, &source, nullptr, &status);
    CHECK(status);
    CHECK(clBuildProgram(program, 1, &device, "", nullptr, nullptr));
    kernel = clCreateKernel(program, "add_scaled", &status);
    CHECK(status);
  }
  void close() {
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
};

// One round of write, kernel and read; returns the first error, or CL_SUCCESS when the
// result was checked right. A wrong result ends the program.
cl_int round(session& s, cl_mem a, cl_mem b, std::vector<int>& in, std::vector<int>& out,
             int scale) {
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i) * 3 + scale;
  const std::size_t bytes = in.size() * sizeof(int);
  if (cl_int status =
          clEnqueueWriteBuffer(s.queue, a, CL_FALSE, 0, bytes, in.data(), 0, nullptr, nullptr);
      status != CL_SUCCESS) {
    return status;
  }
  if (cl_int status = clSetKernelArg(s.kernel, 2, sizeof scale, &scale); status != CL_SUCCESS) {
    return status;
  }
  const std::size_t global = in.size();
  if (cl_int status = clEnqueueNDRangeKernel(s.queue, s.kernel, 1, nullptr, &global, nullptr, 0,
                                             nullptr, nullptr);
      status != CL_SUCCESS) {
    return status;
  }
  // Odd rounds read without blocking, then finish: a server lost meanwhile must fail the
  // finish, not leave it waiting for bytes that never come.
  const cl_bool blocking = scale % 2 == 0 ? CL_TRUE : CL_FALSE;
  if (cl_int status =
          clEnqueueReadBuffer(s.queue, b, blocking, 0, bytes, out.data(), 0, nullptr, nullptr);
      status != CL_SUCCESS) {
    return status;
  }
  if (!blocking) {
    if (cl_int status = clFinish(s.queue); status != CL_SUCCESS) return status;
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (out[i] != in[i] * scale + static_cast<int>(i)) {
      std::printf("wrong at %zu: %d\n", i, out[i]);
      std::fflush(stdout);
      std::exit(1);
    }
  }
  return CL_SUCCESS;
}

int check_loop(int rounds) {
  session s;
  s.open();
  const std::size_t count = 1 << 16;
  cl_int status = CL_SUCCESS;
  cl_mem a = clCreateBuffer(s.context, CL_MEM_READ_ONLY, count * sizeof(int), nullptr, &status);
  CHECK(status);
  cl_mem b = clCreateBuffer(s.context, CL_MEM_WRITE_ONLY, count * sizeof(int), nullptr, &status);
  CHECK(status);
  CHECK(clSetKernelArg(s.kernel, 0, sizeof a, &a));
  CHECK(clSetKernelArg(s.kernel, 1, sizeof b, &b));
  std::vector<int> in(count), out(count);
  for (int i = 0; i < rounds; ++i) CHECK(round(s, a, b, in, out, i + 1));
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  s.close();
  say("ok");
  return 0;
}

int run_until_error() {
  session s;
  s.open();
  const std::size_t count = 1 << 18;
  cl_int status = CL_SUCCESS;
  cl_mem a = clCreateBuffer(s.context, CL_MEM_READ_ONLY, count * sizeof(int), nullptr, &status);
  CHECK(status);
  cl_mem b = clCreateBuffer(s.context, CL_MEM_WRITE_ONLY, count * sizeof(int), nullptr, &status);
  CHECK(status);
  CHECK(clSetKernelArg(s.kernel, 0, sizeof a, &a));
  CHECK(clSetKernelArg(s.kernel, 1, sizeof b, &b));
  std::vector<int> in(count), out(count);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    if (cl_int failed = round(s, a, b, in, out, i % 100 + 1); failed != CL_SUCCESS) {
      std::printf("error %d\n", failed);
      std::fflush(stdout);
      // Calls after the loss fail at once too, and releasing does not hang.
      cl_int again = clFinish(s.queue);
      std::printf("then %d\n", again);
      std::fflush(stdout);
      clReleaseMemObject(a);
      clReleaseMemObject(b);
      s.close();
      return again != CL_SUCCESS ? 0 : 1;
    }
    if (i == 0) say("ready");
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
      say("no error within 120 s");
      return 2;
    }
  }
}

const char* spin_source = R"(
__kernel void spin(__global ulong* state, ulong steps) {
  ulong x = state[0];
  for (ulong i = 0; i < steps; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
  state[0] = x;
}
)";

// Runs one kernel that takes at least `seconds` (doubling its length until one did), each
// result checked against the same steps on the host; prints "ok <seconds the longest took>".
int long_kernel(double seconds) {
  session s;
  s.open();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(s.context, 1, &spin_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram(program, 1, &s.device, "", nullptr, nullptr));
  cl_kernel spin = clCreateKernel(program, "spin", &status);
  CHECK(status);
  cl_mem state = clCreateBuffer(s.context, CL_MEM_READ_WRITE, sizeof(cl_ulong), nullptr, &status);
  CHECK(status);
  CHECK(clSetKernelArg(spin, 0, sizeof state, &state));
  double took = 0;
  for (cl_ulong steps = cl_ulong{1} << 24; took < seconds; steps *= 2) {
    cl_ulong seed = steps ^ 0x9e3779b97f4a7c15ULL, result = 0;
    CHECK(
        clEnqueueWriteBuffer(s.queue, state, CL_TRUE, 0, sizeof seed, &seed, 0, nullptr, nullptr));
    CHECK(clSetKernelArg(spin, 1, sizeof steps, &steps));
    const std::size_t one = 1;
    const auto start = std::chrono::steady_clock::now();
    CHECK(clEnqueueNDRangeKernel(s.queue, spin, 1, nullptr, &one, &one, 0, nullptr, nullptr));
    CHECK(clFinish(s.queue));  // a call blocked for the kernel's whole run
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(clEnqueueReadBuffer(s.queue, state, CL_TRUE, 0, sizeof result, &result, 0, nullptr,
                              nullptr));
    cl_ulong expected = seed;
    for (cl_ulong i = 0; i < steps; ++i) {
      expected = expected * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    if (result != expected) {
      std::printf("wrong after %llu steps\n", static_cast<unsigned long long>(steps));
      return 1;
    }
  }
  clReleaseMemObject(state);
  clReleaseKernel(spin);
  clReleaseProgram(program);
  s.close();
  std::printf("ok %.3f\n", took);
  return 0;
}

int transfer_forever(std::size_t mebibytes) {
  session s;
  s.open();
  const std::size_t bytes = mebibytes << 20;
  std::vector<unsigned char> data(bytes, 0x5a);
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  CHECK(status);
  for (int i = 0;; ++i) {
    data[static_cast<std::size_t>(i) % bytes] = static_cast<unsigned char>(i);
    CHECK(clEnqueueWriteBuffer(s.queue, buffer, CL_FALSE, 0, bytes, data.data(), 0, nullptr,
                               nullptr));
    CHECK(
        clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, bytes, data.data(), 0, nullptr, nullptr));
    if (i == 0) say("ready");
  }
}

// The sockets this process holds.
std::size_t open_sockets() {
  std::size_t count = 0;
  DIR* folder = ::opendir("/proc/self/fd");
  if (folder == nullptr) return 0;
  while (dirent* entry = ::readdir(folder)) {
    char target[64] = {};
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    if (::readlink(path.c_str(), target, sizeof target - 1) > 0 &&
        std::strncmp(target, "socket:", 7) == 0) {
      ++count;
    }
  }
  ::closedir(folder);
  return count;
}

// Striped transfers (TROUPE_ICD_STREAMS, set by the test) until one fails: "error CODE". Says
// "ready" after the first only if it was striped: the session's first connection, the
// thread's own and three bulk ones at least.
int stripe_until_error() {
  session s;
  s.open();
  const std::size_t bytes = 64u << 20;
  std::vector<unsigned char> data(bytes, 0x5a);
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  CHECK(status);
  for (int i = 0;; ++i) {
    status =
        clEnqueueWriteBuffer(s.queue, buffer, CL_TRUE, 0, bytes, data.data(), 0, nullptr, nullptr);
    if (status == CL_SUCCESS) {
      status =
          clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, bytes, data.data(), 0, nullptr, nullptr);
    }
    if (status != CL_SUCCESS) {
      std::printf("error %d\n", status);
      std::fflush(stdout);
      return 0;
    }
    if (i == 0 && open_sockets() < 5) {
      std::printf("not striped: %zu sockets open\n", open_sockets());
      return 1;
    }
    if (i == 0) say("ready");
  }
}

// Counts operations and the errors among them: a failed call, or a result unlike the host's.
struct tally {
  int operations = 0;
  int errors = 0;
  bool check(const char* what, cl_int status) {
    ++operations;
    if (status == CL_SUCCESS) return true;
    ++errors;
    std::fprintf(stderr, "client_helper: %s gave %d\n", what, status);
    return false;
  }
};

// One round of 11 operations on buffers of a size that changes from round to round.
void mixed_round(session& s, int round, tally& count) {
  const std::size_t items = std::size_t{64} << (round % 5);
  const std::size_t bytes = items * sizeof(int);
  cl_int status = CL_SUCCESS;
  cl_mem a = clCreateBuffer(s.context, CL_MEM_READ_ONLY, bytes, nullptr, &status);
  const bool made_a = count.check("clCreateBuffer", status);
  cl_mem b = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  const bool made_b = count.check("clCreateBuffer", status);
  std::vector<int> in(items), out(items, -1);
  const int scale = round % 7 + 2;
  for (std::size_t i = 0; i < items; ++i) in[i] = static_cast<int>(i) * 5 - round;
  if (made_a && made_b) {
    count.check("clEnqueueWriteBuffer", clEnqueueWriteBuffer(s.queue, a, CL_FALSE, 0, bytes,
                                                             in.data(), 0, nullptr, nullptr));
    count.check("clSetKernelArg", clSetKernelArg(s.kernel, 0, sizeof a, &a));
    count.check("clSetKernelArg", clSetKernelArg(s.kernel, 1, sizeof b, &b));
    count.check("clSetKernelArg", clSetKernelArg(s.kernel, 2, sizeof scale, &scale));
    count.check("clEnqueueNDRangeKernel",
                clEnqueueNDRangeKernel(s.queue, s.kernel, 1, nullptr, &items, nullptr, 0, nullptr,
                                       nullptr));
    count.check("clEnqueueReadBuffer", clEnqueueReadBuffer(s.queue, b, CL_FALSE, 0, bytes,
                                                           out.data(), 0, nullptr, nullptr));
    if (count.check("clFinish", clFinish(s.queue))) {
      for (std::size_t i = 0; i < items; ++i) {
        if (out[i] == in[i] * scale + static_cast<int>(i)) continue;
        ++count.errors;
        std::fprintf(stderr, "client_helper: round %d: item %zu is %d, the host says %d\n", round,
                     i, out[i], in[i] * scale + static_cast<int>(i));
        break;
      }
    }
  }
  if (made_a) count.check("clReleaseMemObject", clReleaseMemObject(a));
  if (made_b) count.check("clReleaseMemObject", clReleaseMemObject(b));
}

int mixed_operations(int operations) {
  session s;
  s.open();
  tally count;
  for (int round = 0; count.operations < operations; ++round) mixed_round(s, round, count);
  s.close();
  std::printf("done %d %d\n", count.operations, count.errors);
  return count.errors == 0 ? 0 : 1;
}

// The end of a helper whose last call had to fail: "error <code>" and 0, or "ok" and 1.
int report_failure(cl_int status) {
  if (status == CL_SUCCESS) {
    say("ok");
    return 1;
  }
  std::printf("error %d\n", status);
  std::fflush(stdout);
  return 0;
}

// A call blocked for a kernel that runs for minutes, for a test that kills the server.
int finish_forever() {
  session s;
  s.open();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(s.context, 1, &spin_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram(program, 1, &s.device, "", nullptr, nullptr));
  cl_kernel spin = clCreateKernel(program, "spin", &status);
  CHECK(status);
  cl_mem state = clCreateBuffer(s.context, CL_MEM_READ_WRITE, sizeof(cl_ulong), nullptr, &status);
  CHECK(status);
  const cl_ulong seed = 1, steps = cl_ulong{1} << 40;
  CHECK(clEnqueueWriteBuffer(s.queue, state, CL_TRUE, 0, sizeof seed, &seed, 0, nullptr, nullptr));
  CHECK(clSetKernelArg(spin, 0, sizeof state, &state));
  CHECK(clSetKernelArg(spin, 1, sizeof steps, &steps));
  const std::size_t one = 1;
  CHECK(clEnqueueNDRangeKernel(s.queue, spin, 1, nullptr, &one, &one, 0, nullptr, nullptr));
  say("finishing");
  status = clFinish(s.queue);
  return report_failure(status);
}

// A client between calls when its server goes: its next call must fail, not wait.
int idle_then_call() {
  session s;
  s.open();
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 4096, nullptr, &status);
  CHECK(status);
  std::vector<unsigned char> data(4096, 0x2a);
  CHECK(clEnqueueWriteBuffer(s.queue, buffer, CL_TRUE, 0, data.size(), data.data(), 0, nullptr,
                             nullptr));
  say("ready");
  if (!next_line()) return 1;
  status = clEnqueueWriteBuffer(s.queue, buffer, CL_TRUE, 0, data.size(), data.data(), 0, nullptr,
                                nullptr);
  return report_failure(status);
}

int hold() {
  session s;
  s.open();
  cl_int status = CL_SUCCESS;
  std::vector<cl_mem> buffers;
  for (int i = 0; i < 3; ++i) {
    buffers.push_back(clCreateBuffer(s.context, CL_MEM_READ_WRITE, 4096, nullptr, &status));
    CHECK(status);
  }
  CHECK(clFinish(s.queue));
  say("ready");
  while (next_line()) {
  }
  for (auto buffer : buffers) clReleaseMemObject(buffer);
  s.close();
  return 0;
}

int lifecycle() {
  session s;
  s.discover();
  say("discovered");
  if (!next_line()) return 1;
  s.open();
  cl_int status = CL_SUCCESS;
  cl_mem a = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 1 << 16, nullptr, &status);
  CHECK(status);
  cl_mem b = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 1 << 16, nullptr, &status);
  CHECK(status);
  cl_buffer_region region{0, 4096};
  cl_mem sub = clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  CHECK(status);
  cl_event gate = clCreateUserEvent(s.context, &status);
  CHECK(status);
  cl_kernel all[4] = {};
  cl_uint made = 0;
  CHECK(clCreateKernelsInProgram(s.program, 4, all, &made));
  int scale = 2;
  CHECK(clSetKernelArg(s.kernel, 0, sizeof a, &a));
  CHECK(clSetKernelArg(s.kernel, 1, sizeof b, &b));
  CHECK(clSetKernelArg(s.kernel, 2, sizeof scale, &scale));
  std::vector<int> host(1 << 14, 1);
  cl_event wrote = nullptr, ran = nullptr, marked = nullptr;
  CHECK(clEnqueueWriteBuffer(s.queue, a, CL_FALSE, 0, host.size() * sizeof(int), host.data(), 1,
                             &gate, &wrote));
  const std::size_t global = host.size();
  CHECK(clEnqueueNDRangeKernel(s.queue, s.kernel, 1, nullptr, &global, nullptr, 1, &wrote, &ran));
  CHECK(clEnqueueMarkerWithWaitList(s.queue, 0, nullptr, &marked));
  CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
  CHECK(clFinish(s.queue));
  say("created");
  if (!next_line()) return 1;
  for (cl_event event : {gate, wrote, ran, marked}) clReleaseEvent(event);
  for (cl_uint i = 0; i < made; ++i) clReleaseKernel(all[i]);
  clReleaseMemObject(sub);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  s.close();
  say("released");
  while (next_line()) {
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: client_helper MODE [ARG]\n");
    return 64;
  }
  const std::string mode = argv[1];
  if (mode == "count-platforms") {
    std::printf("%zu\n", troupe_platforms().size());
    return 0;
  }
  if (mode == "platform-names") {
    for (auto platform : troupe_platforms()) {
      char name[1024] = {};
      CHECK(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr));
      std::printf("%s\n", name);
    }
    return 0;
  }
  if (mode == "long-kernel") return long_kernel(argc > 2 ? std::atof(argv[2]) : 1.0);
  if (mode == "check-loop") return check_loop(argc > 2 ? std::atoi(argv[2]) : 10);
  if (mode == "run-until-error") return run_until_error();
  if (mode == "transfer-forever") {
    return transfer_forever(argc > 2 ? static_cast<std::size_t>(std::atoi(argv[2])) : 64);
  }
  if (mode == "mixed-operations") return mixed_operations(argc > 2 ? std::atoi(argv[2]) : 1000);
  if (mode == "finish-forever") return finish_forever();
  if (mode == "idle-then-call") return idle_then_call();
  if (mode == "stripe-until-error") return stripe_until_error();
  if (mode == "hold") return hold();
  if (mode == "lifecycle") return lifecycle();
  std::fprintf(stderr, "client_helper: unknown mode %s\n", argv[1]);
  return 64;
}
