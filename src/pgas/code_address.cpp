#include "troupe/pgas/detail/code_address.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "troupe/async/error.hpp"

namespace troupe::pgas::detail {

namespace {

// FNV-1a of the module's file name without its folder: the same on every node of a job even
// where the program lies in different folders.
std::uint32_t module_hash(const char* path) {
  const char* slash = std::strrchr(path, '/');
  std::uint32_t hash = 2166136261u;
  for (const char* c = slash ? slash + 1 : path; *c; ++c)
    hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
  return hash;
}

// The modules of this process, as dladdr names them, by hash. Filled on first use and when a
// module is not found (one loaded later).
struct module_table {
  std::mutex mutex;
  std::vector<std::pair<std::uint32_t, std::uintptr_t>> bases;

  void rebuild() {
    bases.clear();
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* self) -> int {
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
            Dl_info named{};
            const void* inside =
                reinterpret_cast<const void*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
            if (dladdr(inside, &named) != 0 && named.dli_fname != nullptr)
              static_cast<module_table*>(self)->bases.emplace_back(
                  module_hash(named.dli_fname), reinterpret_cast<std::uintptr_t>(named.dli_fbase));
            break;
          }
          return 0;
        },
        this);
  }
};

module_table& modules() {
  static module_table table;  // read-only facts about this process, never torn down
  return table;
}

}  // namespace

code_address encode(any_function function) {
  Dl_info info{};
  void* address = nullptr;
  std::memcpy(&address, &function, sizeof address);
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr)
    throw error(errc::invalid_argument,
                "pgas: a lambda's code lies in no loaded module, so no other PE can find it");
  const auto offset =
      reinterpret_cast<std::uintptr_t>(address) - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  if (offset > 0xffffffffu)
    throw error(errc::invalid_argument, "pgas: a lambda's code lies over 4 GiB into its module");
  return {module_hash(info.dli_fname), static_cast<std::uint32_t>(offset)};
}

any_function decode(code_address address) {
  module_table& table = modules();
  std::lock_guard guard{table.mutex};
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (auto [hash, base] : table.bases) {
      if (hash != address.module) continue;
      const std::uintptr_t where = base + address.offset;
      any_function function;
      std::memcpy(&function, &where, sizeof function);
      return function;
    }
    table.rebuild();
  }
  throw error(errc::invalid_argument,
              "pgas: a lambda arrived from a module that this process has not loaded; every PE "
              "must run the same program");
}

}  // namespace troupe::pgas::detail
