#include "remote/icd/image_checks.hpp"

namespace troupe::remote::icd {

cl_int check_image_region(const _cl_mem& image, const std::size_t* origin,
                          const std::size_t* region) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0) return CL_INVALID_VALUE;
  if (image.width == 0) return CL_SUCCESS;
  // The driver keeps an array's images in `depth`; a 1D array's count in the region's [1].
  const bool one_d_array = image.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  const std::size_t extent[3] = {image.width, one_d_array ? image.depth : image.height,
                                 one_d_array ? 1 : image.depth};
  for (int i = 0; i < 3; ++i) {
    if (origin[i] >= extent[i] || region[i] > extent[i] - origin[i]) return CL_INVALID_VALUE;
  }
  return CL_SUCCESS;
}

cl_int check_image_pitches(const _cl_mem& image, const std::size_t* region, std::size_t row_pitch,
                           std::size_t slice_pitch) {
  const std::size_t row_bytes = region[0] * image.element_size;
  if (row_pitch != 0 && row_pitch < row_bytes) return CL_INVALID_VALUE;
  const std::size_t row = row_pitch != 0 ? row_pitch : row_bytes;
  const std::size_t rows = image.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : region[1];
  if (slice_pitch != 0 && slice_pitch < row * rows) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

std::size_t image_region_bytes(const _cl_mem& image, const std::size_t* region) {
  return region[0] * region[1] * region[2] * image.element_size;
}

bool image_regions_overlap(const std::size_t* source, const std::size_t* destination,
                           const std::size_t* region) {
  // Two boxes of one size share a pixel when they are closer than that size on every axis.
  for (int i = 0; i < 3; ++i) {
    std::size_t apart =
        source[i] > destination[i] ? source[i] - destination[i] : destination[i] - source[i];
    if (apart >= region[i]) return false;
  }
  return true;
}

}  // namespace troupe::remote::icd
