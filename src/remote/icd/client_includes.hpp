// A build's -I folders name the client's files, but the compiler runs in the server, which has
// other files (or none at those paths). The driver takes -I out of the options and sends the
// files the sources include from those folders; the server lays each folder out in a private
// folder of its own and searches them in the same order (docs/remote.md, "Builds").
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace troupe::remote::icd {

/// One -I folder's files that the sources include: path relative to the folder, and contents.
using include_folder = std::vector<std::pair<std::string, std::string>>;

struct client_includes {
  std::string options;                  ///< the options without their -I folders
  std::vector<include_folder> folders;  ///< one per -I, in the options' order
  bool over_limit = false;  ///< more than max_include_files or max_include_bytes were found
};

/// The -I folders of `options` and the files that `sources` include from them, directly or
/// through other such files. An include is looked for as the compiler looks for it: next to the
/// file that includes it (for "name" in a folder's file), then in each folder in order. Names
/// that are absolute or climb with `..` are left to the server, which refuses them; a folder
/// that does not exist is skipped, as compilers skip it.
client_includes gather_client_includes(std::string_view options,
                                       const std::vector<std::string_view>& sources);

}  // namespace troupe::remote::icd
