#include "remote/protocol/rect_checks.hpp"

#include <cstdint>

namespace troupe::remote {

namespace {

// The pitches a rectangle's layout has, 0 meaning packed.
struct pitches {
  std::size_t row, slice;
};
pitches resolved(const std::size_t* region, std::size_t row_pitch, std::size_t slice_pitch) {
  std::size_t row = row_pitch != 0 ? row_pitch : region[0];
  return {row, slice_pitch != 0 ? slice_pitch : row * region[1]};
}

// The byte offset of a rectangle's first byte.
std::size_t start_of(const std::size_t* origin, pitches layout) {
  return origin[2] * layout.slice + origin[1] * layout.row + origin[0];
}

// Whether a stretch of `length` bytes at `first` (within a period, modulo it) and one at
// `second` stay apart in every period: the one fits into the gap the other leaves.
bool apart_within(std::size_t first, std::size_t second, std::size_t length, std::size_t period) {
  return (second >= first + length && second + length <= first + period) ||
         (first >= second + length && first + length <= second + period);
}

}  // namespace

cl_int check_rect_pitches(const std::size_t* region, std::size_t row_pitch,
                          std::size_t slice_pitch) {
  if (region[0] == 0 || region[1] == 0 || region[2] == 0) return CL_INVALID_VALUE;
  if (row_pitch != 0 && row_pitch < region[0]) return CL_INVALID_VALUE;
  // A rectangle whose bytes a size cannot count is in no buffer; every product below fits then.
  std::size_t packed_slice = 0, span = 0;
  if (__builtin_mul_overflow(row_pitch != 0 ? row_pitch : region[0], region[1], &packed_slice) ||
      __builtin_mul_overflow(slice_pitch != 0 ? slice_pitch : packed_slice, region[2], &span)) {
    return CL_INVALID_VALUE;
  }
  auto layout = resolved(region, row_pitch, slice_pitch);
  if (slice_pitch != 0 && (slice_pitch < region[1] * layout.row || slice_pitch % layout.row != 0)) {
    return CL_INVALID_VALUE;
  }
  return CL_SUCCESS;
}

cl_int check_buffer_rect(std::size_t size, const std::size_t* origin, const std::size_t* region,
                         std::size_t row_pitch, std::size_t slice_pitch) {
  if (cl_int status = check_rect_pitches(region, row_pitch, slice_pitch); status != CL_SUCCESS) {
    return status;
  }
  auto layout = resolved(region, row_pitch, slice_pitch);
  // One past the last byte the rectangle touches; an origin so far out that it overflows is
  // past the buffer too.
  std::size_t slices = 0, rows = 0, end = 0;
  if (__builtin_mul_overflow(origin[2] + region[2] - 1, layout.slice, &slices) ||
      __builtin_mul_overflow(origin[1] + region[1] - 1, layout.row, &rows) ||
      __builtin_add_overflow(slices, rows, &end) || __builtin_add_overflow(end, origin[0], &end) ||
      __builtin_add_overflow(end, region[0], &end) || origin[2] > SIZE_MAX - region[2] ||
      origin[1] > SIZE_MAX - region[1]) {
    return CL_INVALID_VALUE;
  }
  return end > size ? CL_INVALID_VALUE : CL_SUCCESS;
}

bool rects_overlap(const std::size_t* source, const std::size_t* destination,
                   const std::size_t* region, std::size_t row_pitch, std::size_t slice_pitch) {
  auto layout = resolved(region, row_pitch, slice_pitch);
  // The bytes one slice of the rectangle spans, and the whole rectangle.
  std::size_t slice_span = (region[1] - 1) * layout.row + region[0];
  std::size_t span = (region[2] - 1) * layout.slice + slice_span;
  std::size_t from = start_of(source, layout), to = start_of(destination, layout);
  if (to + span <= from || from + span <= to) return false;
  // Within the span, the rows of one may fall between the rows of the other, and the slices
  // of one between the slices of the other.
  if (apart_within(source[0] % layout.row, destination[0] % layout.row, region[0], layout.row)) {
    return false;
  }
  return !apart_within((source[1] * layout.row + source[0]) % layout.slice,
                       (destination[1] * layout.row + destination[0]) % layout.slice, slice_span,
                       layout.slice);
}

cl_int check_box(const std::size_t* extent, const std::size_t* origin, const std::size_t* region) {
  for (int i = 0; i < 3; ++i) {
    if (region[i] == 0 || origin[i] >= extent[i] || region[i] > extent[i] - origin[i]) {
      return CL_INVALID_VALUE;
    }
  }
  return CL_SUCCESS;
}

bool boxes_overlap(const std::size_t* source, const std::size_t* destination,
                   const std::size_t* region) {
  // Two boxes of one size share a point when they are closer than that size on every axis.
  for (int i = 0; i < 3; ++i) {
    std::size_t apart =
        source[i] > destination[i] ? source[i] - destination[i] : destination[i] - source[i];
    if (apart >= region[i]) return false;
  }
  return true;
}

}  // namespace troupe::remote
