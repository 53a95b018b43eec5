#pragma once

// Bytes for the buffer tests: random contents, a whole buffer read back, and the CPU reference
// of a rectangle copy.
#include <CL/cl.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cl_checks.hpp"
#include "side.hpp"

namespace troupe::remote_test {

/// `size` bytes drawn from a generator seeded with `seed`: the same on every side.
inline std::vector<unsigned char> random_bytes(std::size_t size, unsigned seed) {
  std::vector<unsigned char> bytes(size);
  std::mt19937_64 random(seed);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word = random();
    std::memcpy(bytes.data() + i, &word, 8);
  }
  for (; i < size; ++i) bytes[i] = static_cast<unsigned char>(random());
  return bytes;
}

/// The first `size` bytes of `buffer`, read on the side's queue.
inline std::vector<unsigned char> read_all(const side& s, cl_mem buffer, std::size_t size) {
  std::vector<unsigned char> bytes(size);
  EXPECT_CL(
      clEnqueueReadBuffer(s.queue, buffer, CL_TRUE, 0, size, bytes.data(), 0, nullptr, nullptr));
  return bytes;
}

/// A CPU clEnqueueCopyBufferRect: the reference for every rectangle operation.
inline void copy_rect(const unsigned char* from, const std::size_t* from_origin,
                      std::size_t from_row, std::size_t from_slice, unsigned char* to,
                      const std::size_t* to_origin, std::size_t to_row, std::size_t to_slice,
                      const std::size_t* region) {
  for (std::size_t z = 0; z < region[2]; ++z) {
    for (std::size_t y = 0; y < region[1]; ++y) {
      std::memcpy(to + (to_origin[2] + z) * to_slice + (to_origin[1] + y) * to_row + to_origin[0],
                  from + (from_origin[2] + z) * from_slice + (from_origin[1] + y) * from_row +
                      from_origin[0],
                  region[0]);
    }
  }
}

}  // namespace troupe::remote_test
