#include "device/cuda/cuda_image.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

constexpr std::string_view magic = "TRPCUDA";
constexpr std::size_t header_bytes = 8;  // the magic and the kind
constexpr char cubin_tag = 'c';
constexpr char ptx_tag = 'p';
constexpr std::array<std::byte, 4> elf_magic{std::byte{0x7f}, std::byte{'E'}, std::byte{'L'},
                                             std::byte{'F'}};

[[noreturn]] void corrupt(std::string_view device_name, std::string_view why) {
  throw error(errc::device_error, "CUDA program binary for device '" + std::string(device_name) +
                                      "' is corrupt: " + std::string(why));
}

}  // namespace

std::vector<std::byte> encode_image(const cuda_image& image) {
  std::vector<std::byte> blob;
  blob.reserve(header_bytes + image.bytes.size());
  for (char letter : magic) blob.push_back(static_cast<std::byte>(letter));
  blob.push_back(
      static_cast<std::byte>(image.kind == cuda_image_kind::cubin ? cubin_tag : ptx_tag));
  blob.insert(blob.end(), image.bytes.begin(), image.bytes.end());
  return blob;
}

cuda_image decode_image(std::span<const std::byte> blob, std::string_view device_name) {
  if (blob.size() <= header_bytes) corrupt(device_name, "too short");
  if (!std::equal(magic.begin(), magic.end(), blob.begin(), [](char letter, std::byte value) {
        return static_cast<std::byte>(letter) == value;
      })) {
    corrupt(device_name, "no troupe CUDA header");
  }
  cuda_image image;
  const auto tag = static_cast<char>(blob[header_bytes - 1]);
  const std::span<const std::byte> code = blob.subspan(header_bytes);
  if (tag == cubin_tag) {
    image.kind = cuda_image_kind::cubin;
    if (code.size() < elf_magic.size() ||
        !std::equal(elf_magic.begin(), elf_magic.end(), code.begin())) {
      corrupt(device_name, "the CUBIN is no ELF file");
    }
  } else if (tag == ptx_tag) {
    image.kind = cuda_image_kind::ptx;
    if (code.back() != std::byte{0}) corrupt(device_name, "the PTX does not end in a NUL");
  } else {
    corrupt(device_name, "unknown code kind");
  }
  image.bytes.assign(code.begin(), code.end());
  return image;
}

}  // namespace troupe::detail
