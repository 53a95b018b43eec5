// Builds must not read the server's files. The compiler runs inside the server, with its file
// system: an `#include` of a path, or an option that adds a search path, a forced include or an
// input file, would compile (and quote in the build log) whatever file the server can read. The
// client's own files are never on the server, so nothing legitimate is lost by refusing them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::remote::server {

/// The first option of `options` that the server refuses, with why; nothing when every one is
/// allowed. Allowed: -D and -U (joined or followed by a macro), -cl-*, -w, -W<warning> (no
/// comma: -Wp, -Wl and -Wa pass options on), -g, -O<level>, -create-library and
/// -enable-link-options. Everything else (-I, -include, -imacros, -x, -isystem, --sysroot,
/// @file, input files, ...) is refused.
std::optional<std::string> refused_build_option(std::string_view options);

/// The first line of `source` that could read a file on the server, with why; nothing when
/// none. Refused: #include, #include_next, #import and #embed, except `#include "name"` of a
/// header the client gave (`headers`, clCompileProgram's input headers), and __has_include.
/// Comments, line splices, digraphs and trigraphs are seen through.
std::optional<std::string> refused_source_line(std::string_view source,
                                               const std::vector<std::string>& headers);

/// Why an input header's name cannot be used (an absolute path, or a `..` component: the
/// compiler writes headers under their names); nothing when it can.
std::optional<std::string> refused_header_name(std::string_view name);

}  // namespace troupe::remote::server
