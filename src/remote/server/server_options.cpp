#include "troupe/remote/server_options.hpp"

#include <stdexcept>

namespace troupe::remote::server {

log_level parse_log_level(const std::string& name) {
  if (name == "error") return log_level::error;
  if (name == "warn") return log_level::warn;
  if (name == "info") return log_level::info;
  if (name == "debug") return log_level::debug;
  throw std::invalid_argument("log level '" + name + "' is not one of error, warn, info, debug");
}

}  // namespace troupe::remote::server
