#include "remote/server/build_refusals.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace troupe::remote::server {

namespace {

// One message from its parts (GCC 12 warns, wrongly, of `"..." + std::string(...)`).
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string text;
  for (auto part : parts) text += part;
  return text;
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}
bool is_identifier(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// A macro definition or name as -D and -U take it: NAME or NAME=value.
bool is_macro(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) != 0) return false;
  auto name = text.substr(0, text.find('='));
  return !name.empty() && std::all_of(name.begin(), name.end(), is_identifier);
}

bool allowed_option(std::string_view option) {
  if (option.starts_with("-cl-")) return true;
  if (option == "-w" || option == "-g" || option == "-create-library" ||
      option == "-enable-link-options") {
    return true;
  }
  if (option.size() == 3 && option.starts_with("-O") &&
      std::string_view("0123s").find(option[2]) != std::string_view::npos) {
    return true;
  }
  // -Werror, -Wno-unused and the like; -Wp,... -Wl,... -Wa,... pass options to other tools.
  if (option.starts_with("-W") && option.size() > 2 &&
      std::all_of(option.begin() + 2, option.end(),
                  [](char c) { return is_identifier(c) || c == '-' || c == '='; })) {
    return option != "-Wp" && option != "-Wl" && option != "-Wa";
  }
  return false;
}

// The source as the compiler's first phases see it: trigraphs replaced and line splices
// removed, with the physical line every character came from.
struct spliced_source {
  std::string text;
  std::vector<std::uint32_t> lines;
};
spliced_source splice(std::string_view source) {
  spliced_source out;
  out.text.reserve(source.size());
  out.lines.reserve(source.size());
  std::uint32_t line = 1;
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '?' && i + 2 < source.size() && source[i + 1] == '?') {
      static constexpr std::string_view from = "=/'()!<>-", to = "#\\^[]|{}~";
      if (auto at = from.find(source[i + 2]); at != std::string_view::npos) {
        c = to[at];
        i += 2;
      }
    }
    if (c == '\\') {
      std::size_t next = i + 1;
      while (next < source.size() &&
             (source[next] == ' ' || source[next] == '\t' || source[next] == '\r')) {
        ++next;
      }
      if (next < source.size() && source[next] == '\n') {
        i = next;
        ++line;
        continue;
      }
    }
    out.text.push_back(c);
    out.lines.push_back(line);
    if (c == '\n') ++line;
  }
  return out;
}

// A directive that could read a file, if `line` (comments gone) is one: why it is refused.
std::optional<std::string> refused_directive(std::string_view line) {
  std::size_t at = 0;
  auto skip_spaces = [&] {
    while (at < line.size() && is_space(line[at])) ++at;
  };
  skip_spaces();
  if (line.substr(at, 1) == "#") {
    at += 1;
  } else if (line.substr(at, 2) == "%:") {
    at += 2;
  } else {
    return std::nullopt;
  }
  skip_spaces();
  std::size_t start = at;
  while (at < line.size() && is_identifier(line[at])) ++at;
  std::string_view directive = line.substr(start, at - start);
  if (directive != "include" && directive != "include_next" && directive != "import" &&
      directive != "embed") {
    return std::nullopt;
  }
  skip_spaces();
  std::string_view rest = line.substr(at);
  while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
  if (directive != "embed" && rest.size() >= 2 &&
      ((rest.front() == '"' && rest.back() == '"') ||
       (rest.front() == '<' && rest.back() == '>'))) {
    auto name = rest.substr(1, rest.size() - 2);
    if (name.find_first_of("\"<>") != std::string_view::npos) {
      return joined({"#", directive, " ", rest, " names no single file"});
    }
    if (auto why = refused_include_name(name))
      return joined({"#", directive, " ", rest, ": ", *why});
    return std::nullopt;  // relative: the client's -I folders, the compiler's own headers
  }
  return joined({"#", directive, " ", rest,
                 " could read a file on the server; only `#include \"name\"` or `<name>` of a "
                 "relative name without '..' is allowed"});
}

}  // namespace

std::optional<std::string> refused_build_option(std::string_view options) {
  std::size_t at = 0;
  bool macro_expected = false;
  while (at < options.size()) {
    while (at < options.size() && is_space(options[at])) ++at;
    std::size_t start = at;
    while (at < options.size() && !is_space(options[at])) ++at;
    std::string_view option = options.substr(start, at - start);
    if (option.empty()) break;
    if (macro_expected) {
      macro_expected = false;
      if (is_macro(option)) continue;
      return joined({"'", option, "' after -D or -U is no macro definition"});
    }
    if (option == "-D" || option == "-U") {
      macro_expected = true;
      continue;
    }
    if ((option.starts_with("-D") || option.starts_with("-U")) && is_macro(option.substr(2))) {
      continue;
    }
    if (!allowed_option(option)) {
      return joined({"build option '", option,
                     "' is refused: the compiler runs inside the server, and options other than "
                     "-D, -U, -cl-*, -w, -W<warning>, -g and -O<level> can make it read the "
                     "server's files"});
    }
  }
  if (macro_expected) return std::string("-D or -U at the end of the options, without a macro");
  return std::nullopt;
}

std::optional<std::string> refused_source_line(std::string_view source) {
  auto spliced = splice(source);
  const std::string& text = spliced.text;
  enum class state { code, string, character, line_comment, block_comment } now = state::code;
  std::string line;  // the current logical line, comments replaced by a space
  std::uint32_t line_number = 1;
  auto end_line = [&]() -> std::optional<std::string> {
    auto refused = refused_directive(line);
    line.clear();
    if (!refused) return std::nullopt;
    return joined({"line ", std::to_string(line_number), ": ", *refused});
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (line.empty() && now == state::code) line_number = spliced.lines[i];
    if (c == '\n' && now != state::block_comment) {
      now = state::code;  // an unterminated literal or a line comment ends here too
      if (auto refused = end_line()) return refused;
      continue;
    }
    switch (now) {
      case state::code:
        if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
          now = text[i + 1] == '/' ? state::line_comment : state::block_comment;
          line.push_back(' ');
          ++i;
          continue;
        }
        if (c == '"') now = state::string;
        if (c == '\'') now = state::character;
        if ((c == '_') && (i == 0 || !is_identifier(text[i - 1])) &&
            std::string_view(text).substr(i).starts_with("__has_include")) {
          return joined({"line ", std::to_string(spliced.lines[i]),
                         ": __has_include could probe files on the server"});
        }
        line.push_back(c);
        break;
      case state::string:
      case state::character:
        line.push_back(c);
        if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          line.push_back(text[++i]);
        } else if (c == (now == state::string ? '"' : '\'')) {
          now = state::code;
        }
        break;
      case state::line_comment:
        break;
      case state::block_comment:
        if (c == '*' && i + 1 < text.size() && text[i + 1] == '/') {
          now = state::code;
          ++i;
        }
        break;
    }
  }
  if (auto refused = end_line()) return refused;
  return std::nullopt;
}

std::optional<std::string> refused_include_name(std::string_view name) {
  if (name.empty()) return std::string("an empty file name");
  if (name.find('\0') != std::string_view::npos) {
    return std::string("a file name with a NUL character");
  }
  if (name.front() == '/' || name.front() == '\\') {
    return joined({"'", name, "' is an absolute path"});
  }
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find_first_of("/\\", start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") {
      return joined({"'", name, "' leaves its folder ('..')"});
    }
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace troupe::remote::server
