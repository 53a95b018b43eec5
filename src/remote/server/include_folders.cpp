#include "remote/server/include_folders.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <stdlib.h>

namespace troupe::remote::server {

sent_includes sent_includes::read(reader& in) {
  sent_includes sent;
  sent.over_limit = in.get<std::uint8_t>() != 0;
  auto folders = in.get<std::uint32_t>();
  // The client's driver keeps to the limits; a client that does not is refused the same way,
  // before anything is written.
  std::uint64_t files = 0, bytes = 0;
  for (std::uint32_t i = 0; i < folders; ++i) {
    auto count = in.get<std::uint32_t>();
    if ((files += count) > max_include_files) {
      sent.over_limit = true;
      return sent;  // the build is refused; the rest of the frame is not read
    }
    auto& folder = sent.folders.emplace_back();
    for (std::uint32_t j = 0; j < count; ++j) {
      auto name = in.get_string();
      folder.emplace_back(std::move(name), in.get_string());
      if ((bytes += folder.back().second.size()) > max_include_bytes) {
        sent.over_limit = true;
        return sent;
      }
    }
  }
  return sent;
}

include_folders::include_folders(const sent_includes& includes) {
  if (includes.folders.empty()) return;
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "troupe-deviced-build-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a folder for the build's -I files under " +
                             fs::temp_directory_path().string() + ": " + std::strerror(errno));
  }
  root_ = pattern;  // mkdtemp makes it 0700: other sessions' builds cannot look in
  try {
    write(includes);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
    throw;
  }
}

void include_folders::write(const sent_includes& includes) {
  namespace fs = std::filesystem;
  for (std::size_t i = 0; i < includes.folders.size(); ++i) {
    fs::path folder = root_ / std::to_string(i);
    fs::create_directory(folder);
    options_ += " -I" + folder.string();
    for (const auto& [name, contents] : includes.folders[i]) {
      fs::path file = folder / name;
      std::error_code error;
      fs::create_directories(file.parent_path(), error);
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
      if (!out.flush()) {
        throw std::runtime_error("cannot write the -I file '" + name + "' to " + file.string() +
                                 (error ? ": " + error.message() : std::string()));
      }
    }
  }
}

include_folders::~include_folders() {
  if (root_.empty()) return;
  std::error_code ignored;  // a leftover temporary folder is no reason to fail a build
  std::filesystem::remove_all(root_, ignored);
}

}  // namespace troupe::remote::server
