#include "troupe/kernel/detail/argument_preparation.hpp"

#include <string>

namespace troupe::kernel::detail {

error argument_error(const std::string& actor, std::size_t position, const std::string& tag,
                     const std::string& problem) {
  return error{errc::invalid_argument,
               actor + ": argument " + std::to_string(position) + " (" + tag + "): " + problem};
}

}  // namespace troupe::kernel::detail
