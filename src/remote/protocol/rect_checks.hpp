// The checks OpenCL makes of a buffer rectangle or an image box. The driver makes them at the call,
// before it sends the command (a pipelined command's error would otherwise come only at the next
// clFinish); the server makes them again, because a client may be hostile and a platform may not
// check (PoCL 3.1 copies a rectangle that reaches past its buffer).
#pragma once

#include <CL/cl.h>

#include <cstddef>

namespace troupe::remote {

/// CL_INVALID_VALUE when `region` has a zero or a pitch is too small or not a multiple of the
/// row pitch (0 means packed, as OpenCL says), else CL_SUCCESS.
cl_int check_rect_pitches(const std::size_t* region, std::size_t row_pitch,
                          std::size_t slice_pitch);

/// CL_INVALID_VALUE when the rectangle at `origin` with these pitches reaches past `size`
/// bytes, or its pitches are wrong (check_rect_pitches), else CL_SUCCESS.
cl_int check_buffer_rect(std::size_t size, const std::size_t* origin, const std::size_t* region,
                         std::size_t row_pitch, std::size_t slice_pitch);

/// True when the rectangles at `source` and `destination` of one buffer, with the same pitches
/// (0: packed), share a byte: OpenCL refuses such a copy with CL_MEM_COPY_OVERLAP.
bool rects_overlap(const std::size_t* source, const std::size_t* destination,
                   const std::size_t* region, std::size_t row_pitch, std::size_t slice_pitch);

/// CL_INVALID_VALUE when `region` has a zero or the box at `origin` reaches past `extent`
/// (an image's, in the region's terms), else CL_SUCCESS.
cl_int check_box(const std::size_t* extent, const std::size_t* origin, const std::size_t* region);

/// True when two boxes of one size, at `source` and `destination`, share a point: OpenCL
/// refuses a copy between such regions of one image with CL_MEM_COPY_OVERLAP.
bool boxes_overlap(const std::size_t* source, const std::size_t* destination,
                   const std::size_t* region);

}  // namespace troupe::remote
