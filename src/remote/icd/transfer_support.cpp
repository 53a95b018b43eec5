#include "remote/icd/transfer_support.hpp"

#include <memory>
#include <vector>

namespace troupe::remote::icd {

void copy_region(const std::byte* from, std::size_t from_row, std::size_t from_slice, std::byte* to,
                 std::size_t to_row, std::size_t to_slice, std::size_t row_bytes, std::size_t rows,
                 std::size_t slices) {
  for (std::size_t z = 0; z < slices; ++z) {
    for (std::size_t y = 0; y < rows; ++y) {
      std::memcpy(to + z * to_slice + y * to_row, from + z * from_slice + y * from_row, row_bytes);
    }
  }
}

void put_triple(request& command, const std::size_t* values) {
  for (int i = 0; i < 3; ++i) command.fields.put<std::uint64_t>(values[i]);
}

std::size_t region_span(std::size_t row_pitch, std::size_t slice_pitch, std::size_t row_bytes,
                        std::size_t rows, std::size_t slices) {
  if (rows == 0 || slices == 0) return 0;
  return (slices - 1) * slice_pitch + (rows - 1) * row_pitch + row_bytes;
}

cl_int read_region(request& reading, cl_command_queue queue, cl_event* event, bool blocking,
                   std::byte* host, std::size_t host_row, std::size_t host_slice,
                   std::size_t row_bytes, std::size_t rows, std::size_t slices) {
  auto packed = std::make_shared<std::vector<std::byte>>(row_bytes * rows * slices);
  auto scatter = [=] {
    copy_region(packed->data(), row_bytes, row_bytes * rows, host, host_row, host_slice, row_bytes,
                rows, slices);
  };
  if (blocking) {
    cl_int status = call_command(reading, queue, event, packed->data(), packed->size());
    if (status == CL_SUCCESS) scatter();
    return status;
  }
  pending_read landing;
  landing.destination = packed->data();
  landing.size = packed->size();
  landing.unpack = scatter;
  landing.covers_begin = host;
  landing.covers_end = host + region_span(host_row, host_slice, row_bytes, rows, slices);
  return send_read(reading, queue, event, std::move(landing));
}

}  // namespace troupe::remote::icd
