#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

/// Compiled device programs on disk, so that a second start of a process skips compilation.
/// One file per key (source, options, device, driver, compiler); the file holds the full key,
/// so a hash collision reads as a miss. Writes go to a temporary file renamed into place, so
/// concurrent processes never see half a file.
class kernel_cache {
 public:
  /// `directory` empty: caching is off.
  explicit kernel_cache(std::filesystem::path directory);

  /// The directory named by a config value: "off", empty for the default, or a path.
  static std::filesystem::path directory_for(const std::string& setting);

  bool enabled() const noexcept { return !directory_.empty(); }
  const std::filesystem::path& directory() const noexcept { return directory_; }

  std::optional<std::vector<std::byte>> load(const std::string& key) const;
  /// Best effort: a cache that cannot be written is skipped, never an error.
  void store(const std::string& key, const std::vector<std::byte>& binary) const;

  /// The file that holds `key`.
  std::filesystem::path file_for(const std::string& key) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace troupe::detail
