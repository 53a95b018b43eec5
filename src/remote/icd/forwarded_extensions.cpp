#include "remote/icd/forwarded_extensions.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace troupe::remote::icd {

bool is_forwarded_extension(std::string_view name) {
  return std::find(std::begin(forwarded_extensions), std::end(forwarded_extensions), name) !=
         std::end(forwarded_extensions);
}

std::string keep_forwarded(std::string_view extensions) {
  std::string kept;
  std::size_t at = 0;
  while (at < extensions.size()) {
    std::size_t begin = extensions.find_first_not_of(' ', at);
    if (begin == std::string_view::npos) break;
    std::size_t end = std::min(extensions.find(' ', begin), extensions.size());
    std::string_view name = extensions.substr(begin, end - begin);
    if (is_forwarded_extension(name)) {
      if (!kept.empty()) kept += ' ';
      kept += name;
    }
    at = end;
  }
  return kept;
}

std::vector<std::byte> keep_forwarded_versions(std::span<const std::byte> named_versions) {
  // cl_name_version: a cl_version (32 bits), then the name in 64 chars, NUL-terminated.
  constexpr std::size_t name_size = 64;
  constexpr std::size_t entry_size = sizeof(std::uint32_t) + name_size;
  std::vector<std::byte> kept;
  for (std::size_t at = 0; at + entry_size <= named_versions.size(); at += entry_size) {
    const auto* name = reinterpret_cast<const char*>(named_versions.data() + at + 4);
    if (is_forwarded_extension(std::string_view(name, strnlen(name, name_size)))) {
      kept.insert(kept.end(), named_versions.begin() + static_cast<std::ptrdiff_t>(at),
                  named_versions.begin() + static_cast<std::ptrdiff_t>(at + entry_size));
    }
  }
  return kept;
}

}  // namespace troupe::remote::icd
