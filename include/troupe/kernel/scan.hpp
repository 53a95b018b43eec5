#pragma once

#include <cstdint>

#include "troupe/core/actor_system.hpp"
#include "troupe/kernel/device_set.hpp"

namespace troupe::kernel {

/// The associative operator of a scan.
enum class scan_operator { sum, bit_or, max };

struct scan_options {
  scan_operator op = scan_operator::sum;
  /// Element i of the result includes element i (else it is the operator over [0, i)).
  bool inclusive = true;
  /// Scans `(x != 0 ? 1 : 0)` instead of x: with sum, the positions of a stream compaction.
  bool count_nonzero = false;
  /// A segmented scan: the message is (data, heads), and the scan starts afresh at each i whose
  /// heads[i] is not 0. Inclusive only.
  bool segmented = false;
};

/// A scan actor over 32-bit unsigned integers on device memory: it receives a
/// `mem_ref<std::uint32_t>` (with options.segmented: the data and a heads mem_ref of the same
/// size) and answers with a new mem_ref of the scan, on the same device, without waiting on the
/// host. The mem_refs it receives need read_write rights (it passes them between its stages).
/// It is a composition of three kernel actors (tile reductions, a scan of those, the tiles'
/// scans), written once for both backends. Throws troupe::error for a segmented exclusive scan.
actor spawn_scan(actor_system& system, device_set devices, scan_options options = {});

}  // namespace troupe::kernel
