#include <cstdint>

#include "troupe/device/detail/command.hpp"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace troupe::detail {

void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#ifdef __linux__
  // Only whole 2 MiB pages inside the range: the ends may share pages with other allocations.
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace troupe::detail
