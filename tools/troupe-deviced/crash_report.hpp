// A server that crashes says where: the signal and the stack go to stderr before it dies, so
// that a crash on a machine without a debugger can be read back with addr2line.
#pragma once

namespace troupe::deviced {

/// Reports SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT with a stack, then dies of the signal as
/// it would have. Does nothing under a sanitizer, whose own report says more.
void report_crashes();

}  // namespace troupe::deviced
