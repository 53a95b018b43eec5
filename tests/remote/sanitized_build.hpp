#pragma once

// Whether this build (the tests and the troupe-deviced they start) runs under a sanitizer, whose
// allocator and signal handlers replace the program's own.
namespace troupe::remote_test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif

}  // namespace troupe::remote_test
