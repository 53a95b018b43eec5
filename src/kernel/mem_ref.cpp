#include "troupe/kernel/mem_ref.hpp"

namespace troupe::kernel {

std::string_view to_string(access rights) noexcept {
  switch (rights) {
    case access::read_only:
      return "read-only";
    case access::write_only:
      return "write-only";
    case access::read_write:
      return "read-write";
  }
  return "?";
}

}  // namespace troupe::kernel
