// The files a client's driver sent from a build's -I folders (icd/client_includes.hpp): read
// from the build's frame, checked, and written to a private folder per build that the compiler
// searches through -I, in the client's order. The folder is removed when the build is done.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "remote/protocol/wire.hpp"

namespace troupe::remote::server {

struct sent_includes {
  /// Per -I folder: each file's name relative to the folder, and its contents.
  std::vector<std::vector<std::pair<std::string, std::string>>> folders;
  bool over_limit = false;  ///< the client found more than max_include_files or _bytes

  /// Reads what put_options_and_includes (icd/api_program.cpp) wrote after the options.
  static sent_includes read(reader& in);
};

/// `includes` on disk for one build. Throws std::runtime_error, naming the file, if a file
/// cannot be written.
class include_folders {
 public:
  explicit include_folders(const sent_includes& includes);
  include_folders(const include_folders&) = delete;
  include_folders& operator=(const include_folders&) = delete;
  ~include_folders();

  /// " -I<folder>" for each folder, in order: appended to the build's options.
  [[nodiscard]] const std::string& options() const { return options_; }

 private:
  void write(const sent_includes& includes);

  std::filesystem::path root_;  // empty when there is nothing to write
  std::string options_;
};

}  // namespace troupe::remote::server
