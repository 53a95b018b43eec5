#pragma once

// Compiled CUDA code, and the blob backend_program::binary() makes of it for the disk cache:
// an 8-byte header ("TRPCUDA" and 'c' for CUBIN or 'p' for PTX), then the image.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace troupe::detail {

enum class cuda_image_kind : std::uint8_t {
  cubin,  ///< machine code for one architecture
  ptx,    ///< virtual code the driver compiles at load; ends in a NUL, as the driver wants it
};

struct cuda_image {
  cuda_image_kind kind = cuda_image_kind::cubin;
  std::vector<std::byte> bytes;
};

std::vector<std::byte> encode_image(const cuda_image& image);

/// Throws troupe::error (errc::device_error) naming the device when `blob` is not one
/// encode_image made.
cuda_image decode_image(std::span<const std::byte> blob, std::string_view device_name);

}  // namespace troupe::detail
