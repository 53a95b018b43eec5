#include "crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>

namespace troupe::deviced {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool under_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool under_sanitizer = true;
#else
constexpr bool under_sanitizer = false;
#endif
#else
constexpr bool under_sanitizer = false;
#endif

void write_text(const char* text) {
  // Only write(2) here: the handler may run with the heap's lock held.
  [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, text, std::strlen(text));
}

// Names the signals report_crashes() takes (strsignal is not safe in a handler).
const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "Segmentation fault";
    case SIGBUS:
      return "Bus error";
    case SIGFPE:
      return "Floating point exception";
    case SIGILL:
      return "Illegal instruction";
    case SIGABRT:
      return "Aborted";
    default:
      return "?";
  }
}

void on_crash(int signal_number) {
  write_text("troupe-deviced: fatal signal ");
  write_text(signal_name(signal_number));
  write_text("; stack (addr2line -e troupe-deviced resolves the offsets):\n");
  std::array<void*, 64> frames{};
  int count = ::backtrace(frames.data(), static_cast<int>(frames.size()));
  ::backtrace_symbols_fd(frames.data(), count, STDERR_FILENO);
  // Die of the same signal, so that the exit status says what happened (SA_RESETHAND).
  ::raise(signal_number);
}

}  // namespace

void report_crashes() {
  if (under_sanitizer) return;
  // backtrace() loads libgcc on its first call, which allocates: do it now, not in the handler.
  std::array<void*, 1> warm{};
  ::backtrace(warm.data(), 1);
  struct sigaction action {};
  action.sa_handler = on_crash;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    ::sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace troupe::deviced
