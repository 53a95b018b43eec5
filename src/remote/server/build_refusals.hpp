// Builds must not read the server's files. The compiler runs inside the server, with its file
// system: an `#include` of a path, or an option that adds a search path, a forced include or an
// input file, would compile (and quote in the build log) whatever file the server can read.
// What a build may include: the files the client's driver sent from its -I folders (written to
// a private folder per build, include_folders.hpp) and the compiler's own headers, by relative
// names without `..`. troupe-deviced works in an empty folder of its own, so that a relative
// name finds nothing beside it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace troupe::remote::server {

/// The first option of `options` that the server refuses, with why; nothing when every one is
/// allowed. Allowed: -D and -U (joined or followed by a macro), -cl-*, -w, -W<warning> (no
/// comma: -Wp, -Wl and -Wa pass options on), -g, -O<level>, -create-library and
/// -enable-link-options. Everything else (-I, -include, -imacros, -x, -isystem, --sysroot,
/// @file, input files, ...) is refused.
std::optional<std::string> refused_build_option(std::string_view options);

/// The first line of `source` that could read a file on the server, with why; nothing when
/// none. Refused: #include, #include_next and #import of anything but a quoted or bracketed
/// name that refused_include_name accepts (a computed include is refused: its name is not
/// known here), #embed, and __has_include. Comments, line splices, digraphs and trigraphs are
/// seen through.
std::optional<std::string> refused_source_line(std::string_view source);

/// Why a name cannot be included or written as a header (an absolute path, or a `..`
/// component); nothing when it can.
std::optional<std::string> refused_include_name(std::string_view name);

}  // namespace troupe::remote::server
