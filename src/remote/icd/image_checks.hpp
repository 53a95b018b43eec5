// The checks OpenCL makes of an image region at the call, made by the driver before it sends
// the command: a pipelined command's error would otherwise come only at the next clFinish,
// and a region PoCL lets past would reach past the image in the server.
#pragma once

#include <CL/cl.h>

#include <cstddef>

#include "remote/icd/objects.hpp"

namespace troupe::remote::icd {

/// CL_INVALID_VALUE when `region` has a zero or the region at `origin` reaches past `image`
/// (in the region's terms: a 1D array's images count in region[1], a 2D array's in region[2]),
/// else CL_SUCCESS. An image whose size the driver does not know passes.
cl_int check_image_region(const _cl_mem& image, const std::size_t* origin,
                          const std::size_t* region);

/// CL_INVALID_VALUE when host pitches for `region` of `image` are too small (0: packed).
cl_int check_image_pitches(const _cl_mem& image, const std::size_t* region, std::size_t row_pitch,
                           std::size_t slice_pitch);

/// The bytes `region` of `image` holds packed.
std::size_t image_region_bytes(const _cl_mem& image, const std::size_t* region);

}  // namespace troupe::remote::icd
