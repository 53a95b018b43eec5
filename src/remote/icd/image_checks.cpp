#include "remote/icd/image_checks.hpp"

#include "remote/protocol/rect_checks.hpp"

namespace troupe::remote::icd {

cl_int check_image_region(const _cl_mem& image, const std::size_t* origin,
                          const std::size_t* region) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0) return CL_INVALID_VALUE;
  if (image.width == 0) return CL_SUCCESS;
  // The driver keeps an array's images in `depth`; a 1D array's count in the region's [1].
  const bool one_d_array = image.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  const std::size_t extent[3] = {image.width, one_d_array ? image.depth : image.height,
                                 one_d_array ? 1 : image.depth};
  return check_box(extent, origin, region);
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

}  // namespace troupe::remote::icd
