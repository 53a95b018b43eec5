#include "device/kernel_cache.hpp"

#include <unistd.h>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace troupe::detail {

namespace {

constexpr char magic[] = "troupe-kernel-cache 1\n";

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void write_size(std::ofstream& out, std::uint64_t n) {
  out.write(reinterpret_cast<const char*>(&n), sizeof n);
}

bool read_size(std::ifstream& in, std::uint64_t& n) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&n), sizeof n));
}

}  // namespace

kernel_cache::kernel_cache(std::filesystem::path directory) : directory_(std::move(directory)) {}

std::filesystem::path kernel_cache::directory_for(const std::string& setting) {
  if (setting == "off") return {};
  if (!setting.empty()) return setting;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::filesystem::path{xdg} / "troupe" / "kernels";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path{home} / ".cache" / "troupe" / "kernels";
  return {};
}

std::filesystem::path kernel_cache::file_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(fnv1a(key)));
  return directory_ / name;
}

std::optional<std::vector<std::byte>> kernel_cache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in{file_for(key), std::ios::binary};
  if (!in) return std::nullopt;
  std::string head(sizeof magic - 1, '\0');
  std::uint64_t key_size = 0;
  std::uint64_t binary_size = 0;
  if (!in.read(head.data(), static_cast<std::streamsize>(head.size())) || head != magic ||
      !read_size(in, key_size) || key_size != key.size())
    return std::nullopt;
  std::string stored(key_size, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(key_size)) || stored != key ||
      !read_size(in, binary_size) || binary_size > (std::uint64_t{1} << 32))
    return std::nullopt;
  std::vector<std::byte> binary(binary_size);
  if (!in.read(reinterpret_cast<char*>(binary.data()), static_cast<std::streamsize>(binary_size)))
    return std::nullopt;
  return binary;
}

void kernel_cache::store(const std::string& key, const std::vector<std::byte>& binary) const {
  if (!enabled()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return;
  static std::atomic<unsigned> sequence{0};  // distinct temporary names within one process
  auto target = file_for(key);
  auto temporary = target;
  temporary += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(sequence++);
  {
    std::ofstream out{temporary, std::ios::binary | std::ios::trunc};
    if (!out) return;
    out.write(magic, sizeof magic - 1);
    write_size(out, key.size());
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    write_size(out, binary.size());
    out.write(reinterpret_cast<const char*>(binary.data()),
              static_cast<std::streamsize>(binary.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(temporary, ec);
      return;
    }
  }
  std::filesystem::rename(temporary, target, ec);
  if (ec) std::filesystem::remove(temporary, ec);
}

}  // namespace troupe::detail
