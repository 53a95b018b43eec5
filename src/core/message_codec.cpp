#include "troupe/core/detail/message_codec.hpp"

#include <dlfcn.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace troupe::detail {

namespace {

// Filled before main, read by the net layer's receiving thread afterwards; the lock covers
// libraries loaded later with dlopen.
struct codec_registry {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, const message_codec*> codecs;
};

codec_registry& registry() {
  static codec_registry instance;
  return instance;
}

}  // namespace

void advise_huge_pages(void* data, std::size_t bytes) noexcept {
  // Only whole huge pages inside the block: the rest of a page may belong to other objects.
  constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
  if (bytes < 2 * huge_page) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge_page - 1) & ~(huge_page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge_page - 1);
  // Advice, not a demand: where the kernel has no huge pages the block is faulted in as before.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

std::uint64_t codec_key(const type_list_info& types, const void* anchor) noexcept {
  // FNV-1a over the mangled names, each followed by a separator, and over the anchor's offset in
  // its module and that module's name: equal on every node that runs the same program, which the
  // net layer checks as the nodes join.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  auto mix = [&](std::string_view text) {
    for (char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ULL;
    }
  };
  for (std::size_t i = 0; i < types.size; ++i) {
    mix(types.types[i]->name());
    mix(",");
  }
  Dl_info module{};
  if (dladdr(anchor, &module) != 0 && module.dli_fbase != nullptr) {
    const auto offset = reinterpret_cast<std::uintptr_t>(anchor) -
                        reinterpret_cast<std::uintptr_t>(module.dli_fbase);
    mix(std::string_view{reinterpret_cast<const char*>(&offset), sizeof offset});
    // The file's name without its folder: nodes may start the program by different paths.
    if (module.dli_fname != nullptr) {
      const std::string_view path{module.dli_fname};
      mix(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
    }
  }
  return hash;
}

bool register_codec(const message_codec& codec) noexcept {
  auto& reg = registry();
  std::lock_guard guard{reg.mutex};
  auto [it, fresh] = reg.codecs.emplace(codec.key, &codec);
  if (!fresh && it->second != &codec) {
    std::fprintf(
        stderr, "troupe: the message types %s and %s have the same wire key %llx; rename one\n",
        it->second->names.c_str(), codec.names.c_str(), static_cast<unsigned long long>(codec.key));
    std::abort();
  }
  return true;
}

const message_codec* find_codec(std::uint64_t key) noexcept {
  auto& reg = registry();
  std::lock_guard guard{reg.mutex};
  auto it = reg.codecs.find(key);
  return it != reg.codecs.end() ? it->second : nullptr;
}

}  // namespace troupe::detail
