// A type named as one in serialization_test.cpp, in an anonymous namespace of its own file (see
// serialization.types_of_anonymous_namespaces_get_keys_of_their_own).
#include <cstdint>

#include "troupe/core.hpp"

namespace {

struct twin {
  double other_layout = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(other_layout);
  }
};

}  // namespace

std::uint64_t twin_key_of_the_other_file();

std::uint64_t twin_key_of_the_other_file() {
  return troupe::detail::type_list_of<twin>.codec()->key;
}
