#include "remote/icd/client_includes.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

#include "remote/protocol/wire.hpp"

namespace troupe::remote::icd {

namespace {

namespace fs = std::filesystem;

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// One option as the compiler's option parser reads it: whitespace ends it except inside double
// quotes, and a backslash keeps the next character. `raw` is its text as written.
struct option_token {
  std::string_view raw;
  std::string value;
};

std::vector<option_token> split_options(std::string_view options) {
  std::vector<option_token> tokens;
  std::size_t at = 0;
  while (at < options.size()) {
    while (at < options.size() && is_space(options[at])) ++at;
    if (at == options.size()) break;
    std::size_t start = at;
    std::string value;
    bool quoted = false;
    for (; at < options.size() && (quoted || !is_space(options[at])); ++at) {
      char c = options[at];
      if (c == '"') {
        quoted = !quoted;
      } else if (c == '\\' && at + 1 < options.size()) {
        value.push_back(options[++at]);
      } else {
        value.push_back(c);
      }
    }
    tokens.push_back({options.substr(start, at - start), std::move(value)});
  }
  return tokens;
}

// An include's name as the server accepts it: relative, without a `..` component.
bool servable_name(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos) return false;
  for (const auto& part : fs::path(name)) {
    if (part == "..") return false;
  }
  return true;
}

// The names of the `#include "name"` and `#include <name>` lines of `text`, and whether each
// was quoted. Lines in comments or in inactive branches are taken too: a file sent that the
// compiler never opens costs only its bytes.
std::vector<std::pair<std::string, bool>> included_names(std::string_view text) {
  std::vector<std::pair<std::string, bool>> names;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    std::size_t i = 0;
    auto skip_spaces = [&] {
      while (i < line.size() && is_space(line[i])) ++i;
    };
    skip_spaces();
    if (i == line.size() || line[i] != '#') continue;
    ++i;
    skip_spaces();
    if (line.substr(i, 7) != "include") continue;
    i += 7;
    skip_spaces();
    if (i == line.size() || (line[i] != '"' && line[i] != '<')) continue;
    char close = line[i] == '"' ? '"' : '>';
    std::size_t name_end = line.find(close, i + 1);
    if (name_end == std::string_view::npos) continue;
    names.emplace_back(std::string(line.substr(i + 1, name_end - i - 1)), close == '"');
  }
  return names;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

class gatherer {
 public:
  gatherer(std::vector<fs::path> folders, client_includes& out)
      : folders_(std::move(folders)), out_(out) {
    out_.folders.resize(folders_.size());
  }

  // The includes of a source (`from` unset) or of folder `from`'s file `relative`.
  void scan(std::string_view text, std::optional<std::size_t> from, const fs::path& relative) {
    for (const auto& [name, quoted] : included_names(text)) {
      if (!servable_name(name)) continue;
      if (quoted && from) {
        auto beside = (relative.parent_path() / name).lexically_normal();
        if (take(*from, beside)) continue;
      }
      for (std::size_t folder = 0; folder < folders_.size(); ++folder) {
        if (take(folder, fs::path(name).lexically_normal())) break;
      }
    }
  }

 private:
  // Sends folder `folder`'s file `relative` if it exists (and scans it); false if it does not.
  bool take(std::size_t folder, const fs::path& relative) {
    if (relative.empty() || *relative.begin() == "..") return false;
    if (seen_.contains({folder, relative.string()})) return true;
    auto contents = read_file(folders_[folder] / relative);
    if (!contents) return false;
    seen_.insert({folder, relative.string()});
    if (++files_ > max_include_files || (bytes_ += contents->size()) > max_include_bytes) {
      out_.over_limit = true;
      return true;
    }
    auto& sent = out_.folders[folder];
    sent.emplace_back(relative.string(), std::move(*contents));
    std::string text = sent.back().second;  // the vector may move as scanning adds files
    scan(text, folder, relative);
    return true;
  }

  std::vector<fs::path> folders_;
  client_includes& out_;
  std::set<std::pair<std::size_t, std::string>> seen_;
  std::size_t files_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace

client_includes gather_client_includes(std::string_view options,
                                       const std::vector<std::string_view>& sources) {
  client_includes out;
  std::vector<fs::path> folders;
  auto tokens = split_options(options);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& token = tokens[i];
    if (token.value == "-I" && i + 1 < tokens.size()) {
      folders.emplace_back(tokens[++i].value);
    } else if (token.value.starts_with("-I") && token.value.size() > 2) {
      folders.emplace_back(token.value.substr(2));
    } else {
      if (!out.options.empty()) out.options.push_back(' ');
      out.options += token.raw;
    }
  }
  if (folders.empty()) {
    out.options = std::string(options);  // as given, spacing and all
    return out;
  }
  gatherer gathering(std::move(folders), out);
  for (auto source : sources) gathering.scan(source, std::nullopt, {});
  return out;
}

}  // namespace troupe::remote::icd
