// The pitches clEnqueueMapImage returns for every image type, against the OpenCL 1.2 spec's
// closed form and the local PoCL's answer for the same image (CTS test_basic enqueue_map_image).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_ref.hpp"
#include "image_fixture.hpp"
#include "image_shapes.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

/// The pitches a map returned.
struct mapped_pitches {
  std::size_t row = 0, slice = 0;
};

// Maps `region` at `origin` for reading and checks every pixel through the returned pitches.
// 1D arrays step through their images by the slice pitch, as the spec lays them out.
mapped_pitches map_and_check(const side& s, const image_shape& shape, const std::size_t* origin,
                             const std::size_t* region) {
  auto pixels = numbered_pixels(shape);
  auto image = make_image(s.context, shape, pixels.data());
  mapped_pitches got;
  if (image.get() == nullptr) return got;
  cl_int status = CL_SUCCESS;
  auto* mapped = static_cast<unsigned char*>(clEnqueueMapImage(s.queue, image, CL_TRUE, CL_MAP_READ,
                                                               origin, region, &got.row, &got.slice,
                                                               0, nullptr, nullptr, &status));
  EXPECT_EQ(status, CL_SUCCESS) << "clEnqueueMapImage gave " << cl_error_name(status);
  if (mapped == nullptr) return got;
  const bool one_d_array = shape.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  const std::size_t rows = one_d_array ? 1 : region[1];
  const std::size_t slices = one_d_array ? region[1] : region[2];
  std::size_t wrong = 0;
  for (std::size_t z = 0; z < slices; ++z) {
    for (std::size_t y = 0; y < rows; ++y) {
      for (std::size_t x = 0; x < region[0]; ++x) {
        const std::size_t iz = (one_d_array ? origin[1] : origin[2]) + z;
        const std::size_t iy = (one_d_array ? 0 : origin[1]) + y;
        const std::size_t index =
            (iz * (one_d_array ? 1 : shape.extent[1]) + iy) * shape.extent[0] + origin[0] + x;
        const unsigned char* at = mapped + z * got.slice + y * got.row + x * pixel;
        if (std::memcmp(at, pixels.data() + index * pixel, pixel) != 0) ++wrong;
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << "pixels read through the returned pitches (row " << got.row << ", slice "
                       << got.slice << ") that differ from the image";
  EXPECT_CL(clEnqueueUnmapMemObject(s.queue, image, mapped, 0, nullptr, nullptr));
  EXPECT_CL(clFinish(s.queue));
  return got;
}

class remote_image_map : public remote_image {
 protected:
  // Maps the same region of the same image on both sides and checks the pitches.
  void check(const image_shape& shape, const std::size_t* origin, const std::size_t* region) {
    SCOPED_TRACE(std::string(shape.name) + ", region " + std::to_string(region[0]) + "x" +
                 std::to_string(region[1]) + "x" + std::to_string(region[2]));
    mapped_pitches native, through;
    {
      SCOPED_TRACE("local");
      native = map_and_check(local, shape, origin, region);
    }
    {
      SCOPED_TRACE("remote");
      through = map_and_check(remote, shape, origin, region);
    }
    // The spec: a row pitch always; a slice pitch for 3D images and arrays, 0 for the others.
    EXPECT_GE(through.row, region[0] * pixel);
    if (has_slices(shape.type)) {
      const std::size_t rows = shape.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : region[1];
      EXPECT_GE(through.slice, through.row * rows) << "slice pitch too small (or 0)";
      EXPECT_NE(native.slice, 0u) << "the local device breaks the spec too";
    } else {
      EXPECT_EQ(through.slice, 0u);
      EXPECT_EQ(native.slice, 0u);
    }
    EXPECT_EQ(through.slice == 0, native.slice == 0) << "local and remote disagree";
    // The driver maps into memory of its own, packed: the closed form exactly.
    const std::size_t row = region[0] * pixel;
    EXPECT_EQ(through.row, row);
    if (shape.type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
      EXPECT_EQ(through.slice, row);
    } else if (has_slices(shape.type)) {
      EXPECT_EQ(through.slice, row * region[1]);
    }
  }
};

TEST_F(remote_image_map, pitches_follow_the_spec_for_every_image_type_and_one_slice_deep) {
  for (const auto& shape : shapes) {
    const std::size_t origin[3] = {3, shape.extent[1] > 1 ? 1u : 0u, shape.extent[2] > 1 ? 2u : 0u};
    // One slice (or one image of an array) deep: the case that returned a slice pitch of 0.
    const std::size_t one_row[3] = {7, 1, 1};
    const std::size_t one_slice[3] = {7, shape.extent[1] > 1 ? 3u : 1u, 1};
    check(shape, origin, one_row);
    check(shape, origin, one_slice);
    // Several slices deep.
    const std::size_t deep[3] = {7, shape.extent[1] > 1 ? 3u : 1u, shape.extent[2] > 1 ? 3u : 1u};
    check(shape, origin, deep);
  }
}

TEST_F(remote_image_map, a_missing_slice_pitch_is_refused_where_the_spec_needs_one) {
  for (const auto& shape : shapes) {
    if (!has_slices(shape.type)) continue;
    SCOPED_TRACE(shape.name);
    // The driver follows the spec here, as PoCL does; NVIDIA's (580) maps without the pitch.
    for (side* s : {&remote}) {
      SCOPED_TRACE(s->name);
      auto pixels = numbered_pixels(shape);
      auto image = make_image(s->context, shape, pixels.data());
      const std::size_t origin[3] = {0, 0, 0}, region[3] = {1, 1, 1};
      std::size_t row = 0;
      cl_int status = CL_SUCCESS;
      void* mapped = clEnqueueMapImage(s->queue, image, CL_TRUE, CL_MAP_READ, origin, region, &row,
                                       nullptr, 0, nullptr, nullptr, &status);
      EXPECT_EQ(status, CL_INVALID_VALUE) << cl_error_name(status);
      EXPECT_EQ(mapped, nullptr);
    }
  }
}

}  // namespace
}  // namespace troupe::remote_test
