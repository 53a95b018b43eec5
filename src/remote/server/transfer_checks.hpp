// What a transfer names lies inside the objects it names. OpenCL makes each platform check
// this, but a platform may not (PoCL 3.1 computes a region's size with wrap-around and then
// reads or writes past the object), and a client may be hostile: the server checks itself.
// Each check throws cl_failure with CL_INVALID_VALUE (CL_MEM_COPY_OVERLAP for overlaps).
#pragma once

#include <CL/cl.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace troupe::remote::server {

using triple = std::array<std::size_t, 3>;

/// `size` bytes at `offset` of `buffer`.
void check_buffer_span(cl_mem buffer, std::uint64_t offset, std::uint64_t size, const char* which);

/// Two spans of `size` bytes of one buffer, at `first` and `second`, do not overlap.
void check_spans_apart(std::uint64_t first, std::uint64_t second, std::uint64_t size);

/// A fill's pattern: 1, 2, 4, ..., 128 bytes, and the span a whole number of them.
void check_fill_pattern(std::size_t pattern_size, std::uint64_t offset, std::uint64_t size);

/// Two images of one format (CL_IMAGE_FORMAT_MISMATCH otherwise): a copy moves pixels.
void check_same_format(cl_mem source, cl_mem target);

/// The rectangle at `origin` of `buffer`, with these pitches (0: packed).
void check_buffer_rect(cl_mem buffer, const triple& origin, const triple& region,
                       std::size_t row_pitch, std::size_t slice_pitch, const char* which);

/// The box at `origin` of `image` (in a region's terms: a 1D array's images in [1], a 2D
/// array's in [2]).
void check_image_box(cl_mem image, const triple& origin, const triple& region, const char* which);

}  // namespace troupe::remote::server
