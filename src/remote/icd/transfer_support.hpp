// Helpers of the commands that move bytes between host memory and buffers or images.
#pragma once

#include <cstddef>

#include "remote/icd/api_support.hpp"

namespace troupe::remote::icd {

/// Copies a 3-D region between two layouts of host memory (rows of `row_bytes`).
void copy_region(const std::byte* from, std::size_t from_row, std::size_t from_slice, std::byte* to,
                 std::size_t to_row, std::size_t to_slice, std::size_t row_bytes, std::size_t rows,
                 std::size_t slices);

/// Puts an origin or region as three u64 fields.
void put_triple(request& command, const std::size_t* values);

/// The host bytes a region of `rows` x `slices` rows of `row_bytes` spans in a layout.
std::size_t region_span(std::size_t row_pitch, std::size_t slice_pitch, std::size_t row_bytes,
                        std::size_t rows, std::size_t slices);

/// Sends a rect or image read, whose bytes come packed and are scattered into the host's layout
/// when they arrive: at once when blocking, else when something needs them (settle_event).
cl_int read_region(request& reading, cl_command_queue queue, cl_event* event, bool blocking,
                   std::byte* host, std::size_t host_row, std::size_t host_slice,
                   std::size_t row_bytes, std::size_t rows, std::size_t slices);

}  // namespace troupe::remote::icd
