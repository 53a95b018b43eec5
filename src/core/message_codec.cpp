#include "troupe/core/detail/message_codec.hpp"

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

std::uint64_t codec_key(const type_list_info& types) noexcept {
  // FNV-1a over the mangled names, each followed by a separator: equal on every node that runs
  // the same program, which the net layer checks as the nodes join.
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
  return hash;
}

bool register_codec(const message_codec& codec) noexcept {
  auto& reg = registry();
  std::lock_guard guard{reg.mutex};
  auto [it, fresh] = reg.codecs.emplace(codec.key, &codec);
  if (!fresh && it->second != &codec && it->second->names != codec.names) {
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
