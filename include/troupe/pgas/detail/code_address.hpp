#pragma once

#include <cstdint>

namespace troupe::pgas::detail {

/// A function's address as every process of an SPMD job can read it: the loaded module (a hash
/// of its file name) and the offset within it. Address-space randomisation moves each module as
/// a whole, so the pair names the same function in every process running the same binaries.
struct code_address {
  std::uint32_t module;
  std::uint32_t offset;
};

using any_function = void (*)();

/// The address as one number, for a block header.
constexpr std::uint64_t pack(code_address address) noexcept {
  return std::uint64_t{address.module} << 32 | address.offset;
}
constexpr code_address unpack(std::uint64_t packed) noexcept {
  return {static_cast<std::uint32_t>(packed >> 32), static_cast<std::uint32_t>(packed)};
}

/// The portable address of `function`; throws if it lies in no loaded module.
code_address encode(any_function function);
/// The function at `address` in this process; throws if no loaded module matches.
any_function decode(code_address address);

}  // namespace troupe::pgas::detail
