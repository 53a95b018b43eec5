#pragma once

#include <cstdint>
#include <type_traits>

namespace troupe {

/// The OpenCL C name of an element or scalar type, against which launches check a kernel's
/// arguments and kernel actors name their signature; "" when there is no single obvious name
/// (structs: those are checked by size only).
template <class T>
constexpr const char* opencl_type_name() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return "float";
  else if constexpr (std::is_same_v<U, double>)
    return "double";
  else if constexpr (std::is_same_v<U, std::int8_t> || std::is_same_v<U, char>)
    return "char";
  else if constexpr (std::is_same_v<U, std::uint8_t>)
    return "uchar";
  else if constexpr (std::is_same_v<U, std::int16_t>)
    return "short";
  else if constexpr (std::is_same_v<U, std::uint16_t>)
    return "ushort";
  else if constexpr (std::is_same_v<U, std::int32_t>)
    return "int";
  else if constexpr (std::is_same_v<U, std::uint32_t>)
    return "uint";
  else if constexpr (std::is_same_v<U, std::int64_t> || std::is_same_v<U, long long>)
    return "long";
  else if constexpr (std::is_same_v<U, std::uint64_t> || std::is_same_v<U, unsigned long long>)
    return "ulong";
  else
    return "";
}

}  // namespace troupe
