#pragma once

#include <string>
#include <utility>
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
/// Stages 2, 4, 5, 7 and 8 are the radix sort, scan and compaction actors of the kernel layer.
class device_builder {
 public:
  /// Spawns the stages on `dev`; their kernels compile in the background.
  device_builder(actor_system& system, const device& dev);

  /// The composed pipeline: a `std::vector<u32>` column in; `(words, values, offsets)` out as
  /// mem_refs, as in wah_index (offsets with one entry more than values).
  const actor& pipeline() const noexcept { return pipeline_; }
  /// The same from a `mem_ref<u32>` column already on the device (it needs read_write rights).
  const actor& resident_pipeline() const noexcept { return resident_pipeline_; }

  /// The index of `column`, built on the device and read back.
  future<wah_index> build(std::vector<u32> column) const;

  /// Where the time goes: per stage, its share of the time until every output is ready (run
  /// up to that stage, best of three, minus the stages before). Waits; for measuring only.
  std::vector<std::pair<std::string, double>> stage_seconds(const std::vector<u32>& column) const;

 private:
  std::vector<std::pair<std::string, actor>> stages_;
  actor pipeline_;
  actor resident_pipeline_;
};

}  // namespace troupe::wah
