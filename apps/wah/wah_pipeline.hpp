#pragma once

#include <vector>

#include "troupe/kernel.hpp"
#include "wah_index.hpp"

namespace troupe::wah {

/// The WAH construction of Fusco et al. as a pipeline of kernel actors on one device, each
/// stage an actor, composed with `*`; nothing comes back to the host before the end but three
/// numbers (the largest value, and the sizes of two compactions):
///   1. row ids           the column to the device, and each row's id
///   2. radix sort        (value, row) pairs by value, stably, 4 bits a pass
///   3. chunks            each row's chunk (row / 31) and its bit in that chunk's literal
///   4. heads, scan       where a (value, chunk) run starts; a segmented OR scan merges its bits
///   5. compaction        one entry per run: value, chunk, literal
///   6. fills             the empty chunks before each literal, as a fill word (or 0)
///   7. fuseFillsLiterals fills and literals interleaved, the zero fills compacted away
///   8. lookup            where each value's words start
/// Stages 4, 5, 7 and 8 use the scan and compaction actors of the kernel layer.
class device_builder {
 public:
  /// Spawns the stages on `dev`; their kernels compile in the background.
  device_builder(actor_system& system, const device& dev);

  /// The composed pipeline: a `std::vector<u32>` column in; `(words, values, offsets)` out as
  /// mem_refs, offsets with one entry per value (the last value's words end at words.size()).
  const actor& pipeline() const noexcept { return pipeline_; }

  /// The index of `column`, built on the device and read back.
  future<wah_index> build(std::vector<u32> column) const;

 private:
  actor pipeline_;
};

}  // namespace troupe::wah
