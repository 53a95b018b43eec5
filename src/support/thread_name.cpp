#include "troupe/support/thread_name.hpp"

#if defined(__linux__)
#include <pthread.h>
#endif

namespace troupe::detail {

void name_thread([[maybe_unused]] std::thread& thread, [[maybe_unused]] const char* name) noexcept {
#if defined(__linux__)
  pthread_setname_np(thread.native_handle(), name);  // fails only for names over 15 characters
#endif
}

}  // namespace troupe::detail
