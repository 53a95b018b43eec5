#include "device/native_baseline.hpp"

namespace troupe::bench {

std::vector<slice> split(std::size_t count, std::size_t parts) {
  std::vector<slice> slices;
  std::size_t first = 0;
  for (std::size_t part = 0; part < parts; ++part) {
    // The first count % parts slices take one element more.
    std::size_t size = count / parts + (part < count % parts ? 1 : 0);
    slices.push_back({first, size});
    first += size;
  }
  return slices;
}

void fill_indices(std::span<float> values, std::size_t first) {
  for (std::size_t index = 0; index < values.size(); ++index)
    values[index] = static_cast<float>(first + index);
}

}  // namespace troupe::bench
