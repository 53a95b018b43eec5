#include "troupe/core/message.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace troupe {

namespace detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name{
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free};
  std::string result = status == 0 && name ? name.get() : type.name();
  // The standard library's long spelling of std::string helps nobody.
  const std::string long_string =
      "std::__cxx11::basic_string<char, std::char_traits<char>, "
      "std::allocator<char> >";
  for (auto pos = result.find(long_string); pos != std::string::npos;
       pos = result.find(long_string, pos))
    result.replace(pos, long_string.size(), "std::string");
  return result;
}

std::string type_names(const type_list_info& types) {
  std::string result = "(";
  for (std::size_t i = 0; i < types.size; ++i) {
    if (i > 0) result += ", ";
    result += type_name(*types.types[i]);
  }
  return result + ")";
}

}  // namespace detail

void message::check(std::size_t index, const std::type_info& wanted) const {
  if (index >= size())
    throw error(errc::invalid_argument, "message::get_as: index " + std::to_string(index) +
                                            " is out of range for a message of " + type_names());
  if (*types()->types[index] != wanted)
    throw error(errc::invalid_argument, "message::get_as: element " + std::to_string(index) +
                                            " of " + type_names() + " is not a " +
                                            detail::type_name(wanted));
}

}  // namespace troupe
